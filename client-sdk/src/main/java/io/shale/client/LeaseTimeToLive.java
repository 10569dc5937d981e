package io.shale.client;

import java.time.Duration;
import java.util.List;

/**
 * A lease as the leader sees it: its granted TTL, the time left before the leader expires it, and
 * (when asked for) its keys, of which there are more than listed when {@code moreKeys}.
 */
public record LeaseTimeToLive(
    long id, Duration granted, Duration remaining, List<byte[]> keys, boolean moreKeys) {}
