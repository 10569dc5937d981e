/**
 * Blob separation: values of at least {@code [lsm.blob] min_value_size_bytes} leave the key-ordered
 * tables at flush and go to blob files; tables keep a {@link io.shale.engine.blob.BlobPointer}.
 * Compaction then moves pointers (a few bytes) instead of the values (the seed's biggest single
 * win: 4.7x less background write volume).
 *
 * <pre>
 * blob file := header record* footer
 * header    := magic u64 "SHALEBLB" | version u32 | crc32c(magic, version) u32          (16 bytes)
 * record    := key length varint | value length varint | key | value |
 *              crc32c(everything before it in the record) u32
 * footer    := records u64 | value bytes u64 | crc32c(records, value bytes) u32 | magic u64 (28 bytes)
 * pointer   := file number varint | value offset varint | value length varint | crc32c(value) u32
 * </pre>
 *
 * The key is kept in the record so that garbage collection can tell, for each record, whether the
 * current version still points at it. The pointer carries the value's checksum, so a read verifies
 * exactly the bytes it uses.
 */
package io.shale.engine.blob;
