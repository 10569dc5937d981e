package io.shale.client;

/**
 * A lease named by a call does not live: it was never granted, or it was revoked or expired. A put
 * naming it wrote nothing. Grant a new lease; a lease that expired cannot be brought back.
 */
public class LeaseNotFoundException extends ShaleException {
  private static final long serialVersionUID = 1L;

  public LeaseNotFoundException(String message, Throwable cause) {
    super(message, cause);
  }
}
