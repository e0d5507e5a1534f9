package org.blur;

import java.util.Objects;

/**
 * A metric's configuration (blur_metric): its id, mechanism, epsilon per
 * report in micro-nats (1,000,000 = 1 nat) and domain (values 0..domain-1).
 * It must match the collector's configuration of the same id.
 */
public final class Metric {
  private final int id;
  private final Mechanism mechanism;
  private final int epsilonMicros;
  private final int domainSize;
  private final int longitudinalEpsilonMicros;
  private final int roundingBuckets;

  private Metric(int id, Mechanism mechanism, int epsilonMicros, int domainSize,
      int longitudinalEpsilonMicros, int roundingBuckets) {
    if (epsilonMicros <= 0 || domainSize < 0 || longitudinalEpsilonMicros < 0
        || roundingBuckets < 0) {
      throw new IllegalArgumentException("metric " + id + ": negative or zero parameter");
    }
    this.id = id;
    this.mechanism = Objects.requireNonNull(mechanism);
    this.epsilonMicros = epsilonMicros;
    this.domainSize = domainSize;
    this.longitudinalEpsilonMicros = longitudinalEpsilonMicros;
    this.roundingBuckets = roundingBuckets;
  }

  /** Any mechanism; the SDK checks the combination when the metric is added. */
  public static Metric of(int id, Mechanism mechanism, int epsilonMicros, int domainSize) {
    return new Metric(id, mechanism, epsilonMicros, domainSize, 0, 0);
  }

  /** Binary randomized response: a yes/no value (0 or 1). */
  public static Metric rr(int id, int epsilonMicros) {
    return of(id, Mechanism.RR, epsilonMicros, 2);
  }

  /** Generalized randomized response over {@code domainSize} values. */
  public static Metric grr(int id, int epsilonMicros, int domainSize) {
    return of(id, Mechanism.GRR, epsilonMicros, domainSize);
  }

  /** Optimized unary encoding over {@code domainSize} values. */
  public static Metric oue(int id, int epsilonMicros, int domainSize) {
    return of(id, Mechanism.OUE, epsilonMicros, domainSize);
  }

  /** Symmetric unary encoding over {@code domainSize} values. */
  public static Metric sue(int id, int epsilonMicros, int domainSize) {
    return of(id, Mechanism.SUE, epsilonMicros, domainSize);
  }

  /** Discrete Laplace noise on a number 0..domainSize-1 (for means). */
  public static Metric laplace(int id, int epsilonMicros, int domainSize) {
    return of(id, Mechanism.LAPLACE, epsilonMicros, domainSize);
  }

  /** Optimized local hashing over {@code domainSize} values. */
  public static Metric olh(int id, int epsilonMicros, int domainSize) {
    return of(id, Mechanism.OLH, epsilonMicros, domainSize);
  }

  /** Hadamard response over {@code domainSize} values. */
  public static Metric hr(int id, int epsilonMicros, int domainSize) {
    return of(id, Mechanism.HR, epsilonMicros, domainSize);
  }

  /**
   * The same metric memoized (sue, rappor; onebit with {@link #roundingBuckets}; loloha needs
   * it): the permanent response drawn once at this epsilon, and every report charging the
   * metric's epsilon, its loss with respect to the permanent response. For any two histories
   * of the device's values the loss is at most that charge per report whose value differs
   * (the ledger's spent total); repeated reports of an unchanging value reveal at most this
   * epsilon about it. The configuration is pinned on the device: change it under a new id.
   */
  public Metric memoized(int longitudinalEpsilonMicros) {
    return new Metric(id, mechanism, epsilonMicros, domainSize, longitudinalEpsilonMicros,
        roundingBuckets);
  }

  /** Memoized onebit only: the rounding buckets (they divide domainSize - 1). */
  public Metric roundingBuckets(int buckets) {
    return new Metric(id, mechanism, epsilonMicros, domainSize, longitudinalEpsilonMicros,
        buckets);
  }

  /** The metric id (an unsigned 32-bit value). */
  public int id() {
    return id;
  }

  /** The mechanism. */
  public Mechanism mechanism() {
    return mechanism;
  }

  /** Epsilon per report, micro-nats. */
  public int epsilonMicros() {
    return epsilonMicros;
  }

  /** Values 0..domainSize-1. */
  public int domainSize() {
    return domainSize;
  }

  /** 0, or the memoized responses' epsilon in micro-nats. */
  public int longitudinalEpsilonMicros() {
    return longitudinalEpsilonMicros;
  }

  /** 0, or memoized onebit's rounding buckets. */
  public int roundingBuckets() {
    return roundingBuckets;
  }
}
