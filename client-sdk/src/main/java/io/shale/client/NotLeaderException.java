package io.shale.client;

/**
 * No node reached could get the request to a leader, through every attempt the retry policy
 * allowed: the cluster is electing, or has lost its majority. Check {@code shalectl status}.
 */
public final class NotLeaderException extends ShaleUnavailableException {
  private static final long serialVersionUID = 1L;

  public NotLeaderException(String message, Throwable cause) {
    super(message, cause);
  }
}
