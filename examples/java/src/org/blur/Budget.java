package org.blur;

/** The device's budget as its ledger holds it (blur_budget), in micro-nats. */
public final class Budget {
  private final long lifetimeCapMicros;
  private final long spentMicros;
  private final long remainingMicros;
  private final long windowStart;
  private final long windowSpentMicros;
  private final int pendingReports;

  Budget(long[] values) {
    lifetimeCapMicros = values[0];
    spentMicros = values[1];
    remainingMicros = values[2];
    windowStart = values[3];
    windowSpentMicros = values[4];
    pendingReports = (int) values[5];
  }

  /** The lifetime cap. */
  public long lifetimeCapMicros() {
    return lifetimeCapMicros;
  }

  /** Spent over the device's life. */
  public long spentMicros() {
    return spentMicros;
  }

  /** Left of the lifetime cap. */
  public long remainingMicros() {
    return remainingMicros;
  }

  /** When the current window began (clock seconds). */
  public long windowStart() {
    return windowStart;
  }

  /** Spent in the current window. */
  public long windowSpentMicros() {
    return windowSpentMicros;
  }

  /** Reports queued and not yet acknowledged. */
  public int pendingReports() {
    return pendingReports;
  }

  @Override
  public boolean equals(Object other) {
    if (!(other instanceof Budget)) return false;
    final Budget b = (Budget) other;
    return lifetimeCapMicros == b.lifetimeCapMicros && spentMicros == b.spentMicros
        && remainingMicros == b.remainingMicros && windowStart == b.windowStart
        && windowSpentMicros == b.windowSpentMicros && pendingReports == b.pendingReports;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(spentMicros) * 31 + Long.hashCode(windowSpentMicros) * 7
        + pendingReports;
  }

  @Override
  public String toString() {
    return "spent " + spentMicros + " of " + lifetimeCapMicros + " micro-nats (window from "
        + windowStart + ": " + windowSpentMicros + "), " + pendingReports + " reports pending";
  }
}
