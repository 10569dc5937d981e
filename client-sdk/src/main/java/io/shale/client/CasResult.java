package io.shale.client;

/**
 * The outcome of a compare-and-set: whether it applied, and the key as it stands after the call
 * (null if absent): after a failed comparison, the value that made it fail.
 */
public record CasResult(boolean applied, Entry current) {}
