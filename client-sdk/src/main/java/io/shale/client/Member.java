package io.shale.client;

/** A voting member of the cluster: its id, its Raft (peer) address and its API address. */
public record Member(String id, String raftAddress, String apiAddress) {}
