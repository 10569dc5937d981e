/**
 * Blob separation: values of at least {@code [lsm.blob] min_value_size_bytes} go to blob files at
 * flush and tables keep a {@link io.shale.engine.blob.BlobPointer}, so compaction moves pointers,
 * not values. A record keeps its key so that GC can tell whether the current version still points
 * at it; a pointer carries its value's checksum, so a read verifies exactly the bytes it uses.
 *
 * <pre>
 * blob file := header record* footer
 * header    := magic u64 "SHALEBLB" | version u32 | crc32c(magic, version) u32          (16 bytes)
 * record    := key length varint | value length varint | key | value | crc32c(record before it) u32
 * footer    := records u64 | value bytes u64 | crc32c(records, value bytes) u32 | magic u64 (28 bytes)
 * pointer   := file number varint | value offset varint | value length varint | crc32c(value) u32
 * </pre>
 */
package io.shale.engine.blob;
