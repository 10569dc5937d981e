package io.shale.client;

/**
 * One change a watch delivers: a put (the key's new value, create index and version) or a delete
 * (an empty value, create index and version 0); {@code entry().modIndex()} is the index of the
 * write that made it. {@code previous} is the key before the change, when the watch asked for
 * previous values ({@link WatchOptions#withPreviousValues}) and the key existed; else null.
 */
public record WatchEvent(Type type, Entry entry, Entry previous) {
  public enum Type {
    PUT,
    DELETE
  }

  public WatchEvent(Type type, Entry entry) {
    this(type, entry, null);
  }
}
