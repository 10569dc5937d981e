package io.shale.engine;

/**
 * A value with the index of the batch that last wrote its key ({@link Engine#getVersioned}). Under
 * Raft the index is the log index of the entry, the same on every replica.
 */
public record VersionedValue(byte[] value, long index) {}
