package org.blur;

/**
 * The oldest pending reports as one encoded blur.ReportBatch: the body of
 * POST /v1/reports. Pass {@link #ackToken} to {@link BlurClient#acknowledge}
 * once the collector answered 200.
 */
public final class Batch {
  private final byte[] bytes;
  private final long ackToken;
  private final int reports;

  Batch(byte[] bytes, long ackToken, int reports) {
    this.bytes = bytes;
    this.ackToken = ackToken;
    this.reports = reports;
  }

  /** The encoded batch (empty when nothing is pending); not copied. */
  public byte[] bytes() {
    return bytes;
  }

  /** The token to acknowledge. */
  public long ackToken() {
    return ackToken;
  }

  /** How many reports it holds. */
  public int reports() {
    return reports;
  }

  /** True when nothing was pending. */
  public boolean isEmpty() {
    return reports == 0;
  }
}
