package org.blur;

import java.util.Arrays;

/**
 * A device's privacy budget, fixed at provisioning (blur_policy): a lifetime
 * cap, optionally an allowance per window of time and caps per metric, all
 * in micro-nats (1,000,000 = 1 nat).
 */
public final class Policy {
  final long lifetimeCapMicros;
  final long windowSeconds;
  final long windowAllowanceMicros;
  final int[] capIds;
  final long[] capMicros;

  private Policy(Builder b) {
    lifetimeCapMicros = b.lifetimeCapMicros;
    windowSeconds = b.windowSeconds;
    windowAllowanceMicros = b.windowAllowanceMicros;
    capIds = Arrays.copyOf(b.capIds, b.caps);
    capMicros = Arrays.copyOf(b.capMicros, b.caps);
  }

  /** A policy to build. */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds a {@link Policy}; every amount must be non-negative. */
  public static final class Builder {
    private long lifetimeCapMicros;
    private long windowSeconds;
    private long windowAllowanceMicros;
    private int[] capIds = new int[0];
    private long[] capMicros = new long[0];
    private int caps;

    private Builder() {}

    private static long checked(long value) {
      if (value < 0) throw new IllegalArgumentException("negative budget amount " + value);
      return value;
    }

    /** The most the device may ever spend. */
    public Builder lifetimeCapMicros(long micros) {
      lifetimeCapMicros = checked(micros);
      return this;
    }

    /** At most {@code allowanceMicros} per {@code seconds} (0 seconds: no window). */
    public Builder window(long seconds, long allowanceMicros) {
      windowSeconds = checked(seconds);
      windowAllowanceMicros = checked(allowanceMicros);
      return this;
    }

    /** At most {@code capMicros} for one metric over the device's life. */
    public Builder metricCap(int metricId, long capMicros) {
      capIds = Arrays.copyOf(capIds, caps + 1);
      this.capMicros = Arrays.copyOf(this.capMicros, caps + 1);
      capIds[caps] = metricId;
      this.capMicros[caps] = checked(capMicros);
      ++caps;
      return this;
    }

    /** The policy. */
    public Policy build() {
      return new Policy(this);
    }
  }
}
