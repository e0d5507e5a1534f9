package org.blur;

/**
 * The JNI entry points (jni/blur_jni.c), one per C API function. Handles are
 * the native clients' addresses; statuses are blur_status values.
 */
final class Native {
  static {
    System.loadLibrary("blur_jni");
  }

  private Native() {}

  static native int sdkVersion();

  static native String statusName(int status);

  /** partitions: null, or {ledger first, ledger count, queue first, queue count}. */
  static native int open(PortAdapter port, int blockSize, int blockCount, int progSize,
      boolean erasedZero, boolean clock, boolean counter, int[] partitions, long[] handle);

  static native void close(long handle);

  static native int provision(long handle, long lifetimeCapMicros, long windowSeconds,
      long windowAllowanceMicros, int[] capIds, long[] capMicros);

  static native int addMetric(long handle, int metricId, int mechanism, int epsilonMicros,
      int domainSize, int longitudinalEpsilonMicros, int roundingBuckets);

  static native int record(long handle, int metricId, int value);

  static native int recordWord(long handle, int metricId, String word);

  /** results: {status, reports, ack token}; the bytes, or null unless the status is OK. */
  static native byte[] pendingBatch(long handle, long[] results);

  static native int acknowledge(long handle, long ackToken);

  /** values: the six fields of blur_budget, in order. */
  static native int budget(long handle, long[] values);

  static native int deviceNonce(long handle, long[] nonce);

  static native int enrollmentBody(long handle, byte[] body);

  /** status[0]: the status; the body's bytes, or null unless it is OK. */
  static native byte[] enrollmentBodyWithToken(long handle, String deviceToken, int[] status);
}
