/**
 * Checksummed file access shared by every on-disk format: CRC32C, varints, durable writes (fsync of
 * files and of their directory), the record log the manifest is written in, and {@link
 * io.shale.engine.io.CorruptionException}, the one way a bad byte on disk is reported.
 *
 * <p>Nothing here knows what an SSTable or a manifest is; formats are owned by their packages.
 */
package io.shale.engine.io;
