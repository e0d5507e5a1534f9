package org.blur;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One device's Blur client over the native SDK (blur.h): its DRBG, privacy
 * budget ledger and persisted report queue on a {@link Port}'s storage.
 * Every call that the SDK refuses throws a {@link BlurException} naming the
 * {@link Status}. Calls are serialized (the methods are synchronized) and the
 * port runs on the calling thread. Close it (try-with-resources) to free the
 * native memory.
 *
 * <pre>{@code
 * try (BlurClient blur = BlurClient.open(dir)) {
 *   if (!blur.isProvisioned()) blur.provision(policy);
 *   blur.addMetric(Metric.rr(1, 1_000_000));   // every start, same configuration
 *   blur.record(1, 1);
 * }
 * }</pre>
 */
public final class BlurClient implements AutoCloseable {
  /** The storage file {@link #open(Path)} keeps in its directory. */
  public static final String STORAGE_FILE = "blur.flash";

  private static final int ENROLLMENT_BODY_LENGTH = 115; // BLUR_ENROLLMENT_BODY_SIZE - 1

  private long handle;
  private final PortAdapter adapter;
  private final Closeable ownedPort;
  private boolean provisioned;

  private BlurClient(long handle, PortAdapter adapter, Closeable ownedPort, boolean provisioned) {
    this.handle = handle;
    this.adapter = adapter;
    this.ownedPort = ownedPort;
    this.provisioned = provisioned;
  }

  /**
   * Opens the device stored in {@code storageDir} (created if needed): a
   * {@link FlashFilePort} on its file {@value #STORAGE_FILE}, closed with the client.
   */
  public static BlurClient open(Path storageDir) throws IOException {
    Files.createDirectories(storageDir);
    final FlashFilePort port = FlashFilePort.open(storageDir.resolve(STORAGE_FILE));
    try {
      return open(port, null, port);
    } catch (RuntimeException e) {
      port.close();
      throw e;
    }
  }

  /**
   * Opens the device on {@code port}: the ledger on its first two blocks, the
   * report queue on the others (blur_open). Blank storage opens unprovisioned.
   */
  public static BlurClient open(Port port) {
    return open(port, null, null);
  }

  /** Opens the device with the ledger and the queue on the given blocks (blur_open_partitioned). */
  public static BlurClient openPartitioned(Port port, int ledgerFirstBlock, int ledgerBlocks,
      int queueFirstBlock, int queueBlocks) {
    return open(port, new int[] {ledgerFirstBlock, ledgerBlocks, queueFirstBlock, queueBlocks},
        null);
  }

  private static BlurClient open(Port port, int[] partitions, Closeable ownedPort) {
    if (port.blockSize() <= 0 || port.blockCount() <= 0 || port.progSize() < 0) {
      throw new IllegalArgumentException("port geometry");
    }
    final PortAdapter adapter = new PortAdapter(port);
    final long[] handle = new long[1];
    final int code = Native.open(adapter, port.blockSize(), port.blockCount(), port.progSize(),
        port.erasedZero(), port.hasClock(), port.hasCounter(), partitions, handle);
    final Throwable failure = adapter.takeFailure();
    final Status status = Status.of(code);
    if (status != Status.OK && status != Status.NOT_PROVISIONED) {
      throw new BlurException(status, "open", failure);
    }
    return new BlurClient(handle[0], adapter, ownedPort, status == Status.OK);
  }

  private long handle() {
    if (handle == 0) throw new IllegalStateException("the BlurClient is closed");
    if (adapter.inPort()) throw new IllegalStateException("a Port called its own BlurClient");
    return handle;
  }

  private void check(int code, String operation) {
    final Throwable failure = adapter.takeFailure();
    if (code != 0) throw new BlurException(Status.of(code), operation, failure);
  }

  /** False on blank storage until {@link #provision}. */
  public synchronized boolean isProvisioned() {
    return provisioned;
  }

  /** Writes the device's first ledger record with {@code policy} and draws its nonce. */
  public synchronized void provision(Policy policy) {
    check(Native.provision(handle(), policy.lifetimeCapMicros, policy.windowSeconds,
              policy.windowAllowanceMicros, policy.capIds, policy.capMicros),
        "provision");
    provisioned = true;
  }

  /** Configures a metric for this session (the same ones at every start). */
  public synchronized void addMetric(Metric metric) {
    check(Native.addMetric(handle(), metric.id(), metric.mechanism().id(), metric.epsilonMicros(),
              metric.domainSize(), metric.longitudinalEpsilonMicros(), metric.roundingBuckets()),
        "addMetric");
  }

  /**
   * Randomizes {@code value} and queues the report, charging its epsilon
   * durably first. A refusal (a budget status, {@link Status#QUEUE_FULL})
   * spends nothing. The exception never carries the value.
   */
  public synchronized void record(int metricId, int value) {
    final int code = Native.record(handle(), metricId, value);
    if (code != 0) check(code, "record (metric " + Integer.toUnsignedString(metricId) + ")");
    else adapter.takeFailure();
  }

  /**
   * Records a word for a word-discovery metric ({@link Mechanism#PEM} or {@link Mechanism#SFP}).
   * Any text is recorded and charged, never refused for its content (a refusal would show it): a
   * word longer than the metric's domain size is cut to it, and one with a character outside
   * lower-case letters and apostrophes is sent as the reserved word "'". Normalize first.
   */
  public synchronized void recordWord(int metricId, String word) {
    final int code = Native.recordWord(handle(), metricId, word);
    if (code != 0) check(code, "recordWord (metric " + Integer.toUnsignedString(metricId) + ")");
    else adapter.takeFailure();
  }

  /** The oldest pending reports (at most 64) as one batch; empty when none. */
  public synchronized Batch pendingBatch() {
    final long[] results = new long[3];
    final byte[] bytes = Native.pendingBatch(handle(), results);
    check((int) results[0], "pendingBatch");
    return new Batch(bytes, results[2], (int) results[1]);
  }

  /** Drops the reports of a batch the collector stored (its {@link Batch#ackToken}). */
  public synchronized void acknowledge(long ackToken) {
    check(Native.acknowledge(handle(), ackToken), "acknowledge");
  }

  /** The budget spent and left, and the reports pending. */
  public synchronized Budget budget() {
    final long[] values = new long[6];
    check(Native.budget(handle(), values), "budget");
    return new Budget(values);
  }

  /** The nonce drawn at provisioning (64 bits, unsigned): the device's identity. */
  public synchronized long deviceNonce() {
    final long[] nonce = new long[1];
    check(Native.deviceNonce(handle(), nonce), "deviceNonce");
    return nonce[0];
  }

  /**
   * The JSON body of POST /v1/enroll for this device,
   * {"device_nonce":"&lt;16 hex digits&gt;","device_key":"&lt;64 hex digits&gt;"}, sent with
   * the app's enrollment secret. The key derives from the device's secret: the collector binds
   * the nonce to it, so enrolling again (after a 401) with this body renews, and nobody else can
   * take the nonce.
   */
  public synchronized String enrollmentBody() {
    final byte[] body = new byte[ENROLLMENT_BODY_LENGTH];
    check(Native.enrollmentBody(handle(), body), "enrollmentBody");
    return new String(body, StandardCharsets.US_ASCII);
  }

  /**
   * The same with the device token a collector issued this device before it had a device key
   * ("device_token"): the proof a device that already reported needs once to bind its key.
   */
  public synchronized String enrollmentBody(String deviceToken) {
    final int[] status = new int[1];
    final byte[] body = Native.enrollmentBodyWithToken(handle(), deviceToken, status);
    check(status[0], "enrollmentBody");
    return new String(body, StandardCharsets.US_ASCII);
  }

  /** Frees the native client and closes the port {@link #open(Path)} opened. Idempotent. */
  @Override
  public synchronized void close() {
    if (handle == 0) return;
    Native.close(handle()); // (not from the client's own port)
    handle = 0;
    if (ownedPort != null) {
      try {
        ownedPort.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
