package io.shale.client;

/**
 * The call's deadline passed before any node answered. Unlike the other failures, a write that
 * times out may or may not have been applied: retrying it with a new call may apply it twice, so
 * read before writing again (or use compare-and-set).
 */
public final class ShaleTimeoutException extends ShaleException {
  private static final long serialVersionUID = 1L;

  public ShaleTimeoutException(String message, Throwable cause) {
    super(message, cause);
  }
}
