package org.blur;

/** A call of the SDK that did not return {@link Status#OK}. */
public final class BlurException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Status status;

  BlurException(Status status, String operation, Throwable cause) {
    super(operation + ": " + status.statusName(), cause);
    this.status = status;
  }

  /** What the SDK returned. */
  public Status status() {
    return status;
  }

  /** The SDK's name of the status (blur_status_name). */
  public String statusName() {
    return status.statusName();
  }
}
