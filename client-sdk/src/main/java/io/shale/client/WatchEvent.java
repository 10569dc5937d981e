package io.shale.client;

/**
 * One change a watch delivers: a put (the key's new value, create index and version) or a delete
 * (an empty value, create index and version 0); {@code entry().modIndex()} is the index of the
 * write that made it.
 */
public record WatchEvent(Type type, Entry entry) {
  public enum Type {
    PUT,
    DELETE
  }
}
