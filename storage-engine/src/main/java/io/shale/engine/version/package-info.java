/**
 * Which files make up the database, and how that changes durably.
 *
 * <p>A {@link io.shale.engine.version.Version} is an immutable list of table files per level. Each
 * flush or compaction is a {@link io.shale.engine.version.VersionEdit} appended (and fsynced) to
 * the manifest before the new version is installed; the edit of a flush also carries the highest
 * applied index its table makes durable, so "files" and "persisted index" move together. {@code
 * CURRENT} names the live manifest and is replaced atomically.
 *
 * <p>Pinning: readers (point reads, iterators, snapshots, checkpoints) hold a reference to a
 * version, and a file is deleted only when no live version lists it. Old generations therefore stay
 * on disk exactly as long as some reader can still see them.
 */
package io.shale.engine.version;
