package io.shale.engine;

/**
 * The engine cannot accept writes: a background flush or compaction failed (a full disk, a failed
 * fsync, an I/O error). What was persisted before stays intact; the engine must be closed and
 * reopened once the cause is fixed.
 */
public final class EngineException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public EngineException(String message, Throwable cause) {
    super(message, cause);
  }
}
