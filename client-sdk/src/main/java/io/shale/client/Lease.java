package io.shale.client;

import java.time.Duration;

/**
 * A granted lease: its id (the index of the entry that granted it, never reused) and its TTL. Keys
 * put with it ({@link ShaleClient#putAsync(byte[], byte[], long)}, {@link Txn#thenPut(byte[],
 * byte[], long)}) are deleted when it is revoked or expires.
 */
public record Lease(long id, Duration ttl) {}
