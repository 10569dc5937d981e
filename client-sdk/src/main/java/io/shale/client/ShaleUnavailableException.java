package io.shale.client;

/**
 * No node could serve the request through every attempt the {@link RetryPolicy} allowed: nodes down
 * or unreachable, or the cluster without a leader ({@link NotLeaderException}). The message names
 * the endpoints tried and the last answers. A write that fails this way may still have reached a
 * leader's log before it failed; read before writing again if that matters.
 */
public class ShaleUnavailableException extends ShaleException {
  private static final long serialVersionUID = 1L;

  public ShaleUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
