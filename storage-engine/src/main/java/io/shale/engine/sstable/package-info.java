/**
 * SSTables: immutable sorted files of internal entries. Every byte is under a checksum: data blocks
 * are checked when read; the filter, properties and index blocks and the footer at open.
 *
 * <pre>
 * table  := data-block* filter-block properties-block index-block footer
 * block  := contents | compression u8 | crc32c(contents, compression) u32
 * data   := entry* restart-offset u32 * n | n u32   (restart entries store whole keys)
 * entry  := shared varint | unshared varint | value-length varint | key-delta | value
 * key    := user key | trailer u64 little-endian, trailer = sequence &lt;&lt; 8 | kind
 * index  := a block with one entry per data block: the block's last user key -> offset, size
 * footer := index, filter, properties handles (offset u64, size u64 each) | version u32 |
 *           crc32c(previous 52 bytes) u32 | magic u64                                   (64 bytes)
 * </pre>
 */
package io.shale.engine.sstable;
