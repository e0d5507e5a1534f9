package org.blur.test;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.blur.Batch;
import org.blur.Blur;
import org.blur.BlurClient;
import org.blur.BlurException;
import org.blur.Budget;
import org.blur.FlashFilePort;
import org.blur.Mechanism;
import org.blur.Metric;
import org.blur.Policy;
import org.blur.Port;
import org.blur.Status;

/**
 * The Java binding's test program, driven by java_binding_test.sh (one JVM
 * per step, so a step that reopens storage is a real restart):
 *
 * <pre>
 *   first DIR STATE BLUR_H MECHANISM_TABLE_H VERSION   mirrors, provision, record, refusals
 *   second DIR STATE URL                  after a restart: same budget, window refusal,
 *                                         enroll + POST + acknowledge, lifetime and metric
 *                                         caps, port failures, rollback counter
 *   fleet URL ROOT DEVICES THREADS TRUTH  simulated devices reporting to the collector
 *   throughput DIR COUNT                  records per second through JNI
 * </pre>
 *
 * A failed check prints "FAIL: ..." and exits 1. The collector's secrets
 * come from the environment (BLUR_ENROLLMENT_SECRET).
 */
public final class BindingTest {
  private static final int NAT = 1_000_000;
  private static final Metric RR = Metric.rr(1, NAT);
  private static final Metric OUE = Metric.oue(2, 2 * NAT, 16);
  private static final Metric LAPLACE = Metric.laplace(3, NAT, 101);
  private static final Metric WORDS = Metric.of(4, Mechanism.PEM, 4 * NAT, 10);

  private BindingTest() {}

  private static final class Failure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Failure(String message) {
      super(message);
    }
  }

  private static void check(boolean condition, String what) {
    if (!condition) throw new Failure(what);
  }

  private static void checkEqual(Object expected, Object actual, String what) {
    check(expected.equals(actual), what + ": expected " + expected + ", got " + actual);
  }

  /** Runs {@code call}, which must throw a BlurException with {@code expected}. */
  private static BlurException expectStatus(Status expected, Runnable call, String what) {
    try {
      call.run();
    } catch (BlurException e) {
      checkEqual(expected, e.status(), what + ": status");
      return e;
    }
    throw new Failure(what + ": no BlurException (expected " + expected + ")");
  }

  public static void main(String[] args) throws Exception {
    try {
      switch (args.length > 0 ? args[0] : "") {
        case "first":
          first(Paths.get(args[1]), Paths.get(args[2]), Paths.get(args[3]), Paths.get(args[4]),
              args[5]);
          break;
        case "second":
          second(Paths.get(args[1]), Paths.get(args[2]), args[3]);
          break;
        case "fleet":
          fleet(args[1], Paths.get(args[2]), Integer.parseInt(args[3]),
              Integer.parseInt(args[4]), Paths.get(args[5]));
          break;
        case "throughput":
          throughput(Paths.get(args[1]), Integer.parseInt(args[2]));
          break;
        case "mirrors":  // alone: examples.java_mirrors
          checkMirrors(Paths.get(args[1]), Paths.get(args[2]));
          System.out.println("Java's Status and Mechanism mirror blur.h and mechanism_table.h");
          break;
        default:
          System.err.println("usage: BindingTest first|second|fleet|throughput|mirrors ...");
          System.exit(2);
      }
    } catch (Failure e) {
      System.err.println("FAIL: " + e.getMessage());
      System.exit(1);
    }
  }

  // ---- first: a new device ----

  private static void first(Path dir, Path state, Path blurH, Path mechanismTable,
      String version) throws IOException {
    checkMirrors(blurH, mechanismTable);
    checkEqual(version, Blur.version(), "Blur.version() (blur_sdk_version)");

    try (BlurClient blur = BlurClient.open(dir)) {
      check(!blur.isProvisioned(), "blank storage opens unprovisioned");
      addMetrics(blur);
      expectStatus(Status.LEDGER_CLOSED, () -> blur.record(1, 0), "record before provision");
      blur.provision(policy());
      check(blur.isProvisioned(), "provisioned");
      expectStatus(Status.INVALID_ARGUMENT, () -> blur.addMetric(Metric.rr(1, NAT)),
          "the same metric id twice");

      // (a) values recorded through the binding: 1 + 2 + 1 nats.
      blur.record(RR.id(), 1);
      blur.record(OUE.id(), 5);
      blur.record(LAPLACE.id(), 42);
      final Budget budget = blur.budget();
      checkEqual(4L * NAT, budget.spentMicros(), "spent after three records");
      checkEqual(4L * NAT, budget.windowSpentMicros(), "window spent after three records");
      checkEqual(16L * NAT, budget.remainingMicros(), "remaining");
      checkEqual(3, budget.pendingReports(), "pending reports");
      check(Math.abs(budget.windowStart() - System.currentTimeMillis() / 1000) < 60,
          "the window started now");

      // (e) a status name crosses JNI: an unknown metric id.
      final BlurException unknown =
          expectStatus(Status.INVALID_ARGUMENT, () -> blur.record(99, 0), "unknown metric id");
      checkEqual("invalid argument", unknown.statusName(), "the status name");
      checkEqual("record (metric 99): invalid argument", unknown.getMessage(), "the message");
      expectStatus(Status.INVALID_ARGUMENT, () -> blur.record(RR.id(), 2), "rr value 2");
      // Words cross JNI for a word-discovery metric, and only there. (Any
      // text is recorded, never refused for its content: sdk tests,
      // PrefixExtension.ClientRecordsWords.)
      expectStatus(Status.INVALID_ARGUMENT, () -> blur.recordWord(RR.id(), "hello"),
          "a word for rr");
      expectStatus(Status.INVALID_ARGUMENT, () -> blur.record(WORDS.id(), 1), "an index for pem");
      checkEqual(budget, blur.budget(), "refused records spend nothing");

      final Batch batch = blur.pendingBatch();
      checkEqual(3, batch.reports(), "batch reports");
      check(batch.bytes().length > 20, "batch bytes");
      final String body = blur.enrollmentBody();
      final String nonce = String.format("%016x", blur.deviceNonce());
      final String head = "{\"device_nonce\":\"" + nonce + "\",\"device_key\":\"";
      check(body.startsWith(head) && body.endsWith("\"}")
          && body.substring(head.length(), body.length() - 2).matches("[0-9a-f]{64}"), body);
      checkEqual(body, blur.enrollmentBody(), "the same device key again");
      checkEqual(body.substring(0, body.length() - 1) + ",\"device_token\":\"bt1-x\"}",
          blur.enrollmentBody("bt1-x"), "enrollment body with a token");
      expectStatus(Status.INVALID_ARGUMENT, () -> blur.enrollmentBody("a\"b"), "a token JSON breaks");

      // One client per storage file: a second open in this process is refused.
      try {
        BlurClient.open(dir).close();
        throw new Failure("the storage file was opened twice");
      } catch (IOException expected) {
        check(expected.getMessage().contains("already open"), expected.getMessage());
      }
      Files.write(state, Arrays.asList(budget.toString(), nonce), StandardCharsets.UTF_8);
      System.out.println("first run: " + budget + ", device " + nonce);
    }
    final BlurClient closed = BlurClient.open(dir);
    closed.close();
    closed.close(); // idempotent
    try {
      closed.budget();
      throw new Failure("a closed client answered");
    } catch (IllegalStateException expected) {
      // the handle is gone
    }
  }

  /** 20 nats for life, 6 per day, metric 2 at most 4. */
  private static Policy policy() {
    return Policy.builder()
        .lifetimeCapMicros(20L * NAT)
        .window(86_400, 6L * NAT)
        .metricCap(OUE.id(), 4L * NAT)
        .build();
  }

  private static void addMetrics(BlurClient blur) {
    blur.addMetric(RR);
    blur.addMetric(OUE);
    blur.addMetric(LAPLACE);
    blur.addMetric(WORDS);
  }

  /**
   * Java's Status and Mechanism enums name the C header's values, and the names cross: a
   * mechanism_table.h line that Mechanism.java lacks, or an extra constant, fails here.
   */
  private static void checkMirrors(Path blurH, Path mechanismTable) throws IOException {
    final String header = Files.readString(blurH);
    final Matcher status = Pattern.compile("BLUR_([A-Z_]+) = (\\d+)").matcher(
        header.substring(header.indexOf("typedef enum blur_status"),
            header.indexOf("} blur_status;")));
    int statuses = 0;
    while (status.find()) {
      final Status s = Status.valueOf(status.group(1));
      checkEqual(Integer.parseInt(status.group(2)), s.code(), "Status." + s + ".code()");
      check(!s.statusName().isEmpty() && !s.statusName().equals("unknown status"),
          "Status." + s + " has a name");
      ++statuses;
    }
    checkEqual(Status.values().length, statuses, "statuses in blur.h");
    checkEqual("ok", Status.OK.statusName(), "OK's name");
    checkEqual("lifetime budget exhausted", Status.BUDGET_EXHAUSTED.statusName(), "name");
    checkEqual("metric reconfigured",
        Status.CONFIGURATION_CHANGED.statusName(), "last name");

    final Matcher row = Pattern.compile("X\\((\\d+), \\w+, (\\w+), (\\w+),")
                            .matcher(Files.readString(mechanismTable));
    int mechanisms = 0;
    while (row.find()) {
      final Mechanism m = Mechanism.valueOf(row.group(3));
      checkEqual(Integer.parseInt(row.group(1)), m.id(), "Mechanism." + m + ".id()");
      checkEqual(row.group(2), m.shortName(), "Mechanism." + m + ".shortName()");
      ++mechanisms;
    }
    checkEqual(Mechanism.values().length, mechanisms, "mechanisms in mechanism_table.h");
  }

  // ---- second: the same device after a restart, and the limits ----

  private static void second(Path dir, Path state, String url) throws Exception {
    final List<String> before = Files.readAllLines(state, StandardCharsets.UTF_8);
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    final Budget full;
    try (BlurClient blur = BlurClient.open(dir)) {
      check(blur.isProvisioned(), "provisioned after the restart");
      addMetrics(blur);
      // (b) the restart kept the budget spent and the reports queued.
      checkEqual(before.get(0), blur.budget().toString(), "budget after the restart");
      checkEqual(before.get(1), String.format("%016x", blur.deviceNonce()), "device nonce");

      // (c) the day's allowance (6 nats): two more rr reports fit, the third is refused.
      blur.record(RR.id(), 0);
      blur.record(RR.id(), 1);
      full = blur.budget();
      checkEqual(6L * NAT, full.windowSpentMicros(), "window spent");
      final byte[] queued = blur.pendingBatch().bytes();
      final BlurException refused = expectStatus(Status.WINDOW_BUDGET_EXHAUSTED,
          () -> blur.record(RR.id(), 1), "rr past the day's allowance");
      checkEqual("window budget exhausted", refused.statusName(), "the refusal's name");
      expectStatus(Status.WINDOW_BUDGET_EXHAUSTED, () -> blur.record(OUE.id(), 1), "oue too");
      checkEqual(full, blur.budget(), "the refusals spent nothing");
      check(Arrays.equals(queued, blur.pendingBatch().bytes()), "the refusals queued nothing");

      // (d) enroll, send the pending batch to the collector, acknowledge.
      final String token = enroll(http, url, blur);
      final Batch batch = blur.pendingBatch();
      checkEqual(5, batch.reports(), "pending reports");
      final String answer = post(http, url, "/v1/reports", "application/x-protobuf", token,
          batch.bytes());
      check(answer.contains("\"accepted\":5"), "the collector stored 5 reports: " + answer);
      blur.acknowledge(batch.ackToken());
      checkEqual(0, blur.budget().pendingReports(), "pending after the acknowledgement");
      check(blur.pendingBatch().isEmpty(), "an empty batch");
      checkEqual(full.spentMicros(), blur.budget().spentMicros(), "acknowledging spends nothing");
      // Provisioning again cannot reset the budget, and the refusal changes
      // nothing: the client stays open and its budget reads the same.
      expectStatus(Status.ALREADY_PROVISIONED,
          () -> blur.provision(Policy.builder().lifetimeCapMicros(100L * NAT).build()),
          "provisioning a provisioned device");
      checkEqual(full.spentMicros(), blur.budget().spentMicros(), "spent after the refusal");
      checkEqual(full.lifetimeCapMicros(), blur.budget().lifetimeCapMicros(),
          "the lifetime cap after the refusal");
    }
    try (BlurClient blur = BlurClient.open(dir)) {
      final Budget after = blur.budget();
      checkEqual(full.spentMicros(), after.spentMicros(), "spent after the refused provision");
      checkEqual(full.lifetimeCapMicros(), after.lifetimeCapMicros(), "the lifetime cap");
      checkEqual(0, after.pendingReports(), "pending after reopening");
      System.out.println("second run: budget kept across the restart, window refusal, "
          + "5 reports stored by the collector and acknowledged, no second provisioning");
    }
    caps(dir.resolveSibling(dir.getFileName() + "-caps"));
    partitionsAndMemoization(dir.resolveSibling(dir.getFileName() + "-partitions"));
    portFailures(dir.resolveSibling(dir.getFileName() + "-failing"));
    rollback(dir.resolveSibling(dir.getFileName() + "-counter"));
  }

  /** The lifetime cap and a metric cap refuse without spending (a port without a clock). */
  private static void caps(Path dir) throws IOException {
    Files.createDirectories(dir);
    try (FlashFilePort port =
             FlashFilePort.builder(dir.resolve("blur.flash")).clock(null).open();
         BlurClient blur = BlurClient.open(port)) {
      blur.provision(Policy.builder().lifetimeCapMicros(5L * NAT).metricCap(2, 2L * NAT).build());
      blur.addMetric(RR);
      blur.addMetric(OUE);
      blur.record(OUE.id(), 3); // 2 nats: metric 2's cap
      Budget budget = blur.budget();
      final BlurException metric = expectStatus(Status.METRIC_BUDGET_EXHAUSTED,
          () -> blur.record(OUE.id(), 4), "oue past its metric cap");
      checkEqual("metric budget exhausted", metric.statusName(), "name");
      checkEqual(budget, blur.budget(), "the metric cap's refusal spent nothing");
      for (int i = 0; i < 3; ++i) blur.record(RR.id(), i & 1); // 5 nats: the lifetime cap
      budget = blur.budget();
      checkEqual(0L, budget.remainingMicros(), "nothing left");
      final BlurException lifetime = expectStatus(Status.BUDGET_EXHAUSTED,
          () -> blur.record(RR.id(), 1), "rr past the lifetime cap");
      checkEqual("lifetime budget exhausted", lifetime.statusName(), "name");
      checkEqual(budget, blur.budget(), "the lifetime cap's refusal spent nothing");
      checkEqual(4, budget.pendingReports(), "four reports queued");
    }
    System.out.println("caps: metric and lifetime caps refused, nothing spent");
  }

  /**
   * The caller's partitions (the ledger after the queue) hold the device
   * across a reopen; overlapping ones are refused. A memoized sue metric
   * charges its epsilon every report, the same for every value, and keeps
   * its configuration: another one under the same id is refused.
   */
  private static void partitionsAndMemoization(Path dir) throws IOException {
    Files.createDirectories(dir);
    final Metric memoized = Metric.sue(4, NAT / 2, 8).memoized(NAT);
    try (FlashFilePort port = FlashFilePort.open(dir.resolve("blur.flash"))) {
      final BlurException overlap = expectStatus(Status.PARTITIONS_OVERLAP,
          () -> BlurClient.openPartitioned(port, 5, 2, 0, 6), "overlapping partitions");
      checkEqual("partitions overlap", overlap.statusName(), "name");
      try (BlurClient blur = BlurClient.openPartitioned(port, 6, 2, 0, 6)) {
        blur.provision(Policy.builder().lifetimeCapMicros(10L * NAT).build());
        blur.addMetric(memoized);
        blur.record(memoized.id(), 3);
        checkEqual(NAT / 2L, blur.budget().spentMicros(), "a memoized report");
        blur.record(memoized.id(), 5); // a new value: the same charge
        checkEqual(1L * NAT, blur.budget().spentMicros(), "a new value charges the same");
      }
      try (BlurClient blur = BlurClient.openPartitioned(port, 6, 2, 0, 6)) {
        check(blur.isProvisioned(), "the partitioned ledger reopens");
        checkEqual(1L * NAT, blur.budget().spentMicros(), "spent on the partitioned ledger");
        checkEqual(2, blur.budget().pendingReports(), "the partitioned queue");
        expectStatus(Status.CONFIGURATION_CHANGED,
            () -> blur.addMetric(Metric.sue(4, NAT / 2, 8).memoized(2 * NAT)),
            "a memoized metric id with another configuration");
        blur.addMetric(memoized);
      }
    }
    System.out.println("partitions: the caller's layout reopens, overlaps are refused; "
        + "memoized sue charged the same for every value, its configuration pinned");
  }

  /** A port whose sync or entropy throws: the SDK fails closed, the exception is the cause. */
  private static void portFailures(Path dir) throws IOException {
    Files.createDirectories(dir);
    final boolean[] failSync = {false};
    try (FlashFilePort file = FlashFilePort.open(dir.resolve("blur.flash"))) {
      final Port failing = new DelegatingPort(file) {
        @Override
        public void sync() throws Exception {
          if (failSync[0]) throw new IOException("injected sync failure");
          super.sync();
        }
      };
      try (BlurClient blur = BlurClient.open(failing)) {
        blur.provision(policy());
        blur.addMetric(RR);
        blur.record(RR.id(), 1);
        failSync[0] = true;
        final BlurException e =
            expectStatus(Status.STORAGE_FAILURE, () -> blur.record(RR.id(), 1), "failing sync");
        check(e.getCause() instanceof IOException
                && e.getCause().getMessage().equals("injected sync failure"),
            "the port's exception is the cause: " + e.getCause());
      }
      failSync[0] = false;
      // After the failure the device reopens; at most the failed record's
      // charge is spent (never a report without its charge).
      try (BlurClient blur = BlurClient.open(failing)) {
        blur.addMetric(RR);
        final Budget budget = blur.budget();
        check(budget.spentMicros() >= NAT && budget.spentMicros() <= 2L * NAT,
            "spent after a failed record: " + budget);
        check(budget.pendingReports() * (long) NAT <= budget.spentMicros(),
            "no report without its charge: " + budget);
        blur.record(RR.id(), 0);
      }
      // A port that calls its own client is refused (the SDK is not reentrant).
      final BlurClient[] self = {null};
      final Port reentrant = new DelegatingPort(file) {
        @Override
        public void sync() throws Exception {
          if (self[0] != null) self[0].budget();
          super.sync();
        }
      };
      try (BlurClient blur = BlurClient.open(reentrant)) {
        blur.addMetric(RR);
        self[0] = blur;
        final BlurException e =
            expectStatus(Status.STORAGE_FAILURE, () -> blur.record(RR.id(), 1), "reentrant port");
        check(e.getCause() instanceof IllegalStateException, "reentrancy's cause: " + e.getCause());
      }
      final Port noEntropy = new DelegatingPort(file) {
        @Override
        public void entropy(byte[] out) {
          throw new IllegalStateException("no entropy");
        }
      };
      final BlurException e =
          expectStatus(Status.ENTROPY_FAILURE, () -> BlurClient.open(noEntropy), "no entropy");
      checkEqual("no entropy", e.getCause().getMessage(), "entropy failure's cause");
    }
    System.out.println(
        "port failures: storage, entropy and reentrant-call exceptions fail closed with a status");
  }

  /** With a monotonic counter, an older copy of the storage is refused. */
  private static void rollback(Path dir) throws IOException {
    Files.createDirectories(dir);
    final Path storage = dir.resolve("blur.flash");
    final FlashFilePort.Builder options =
        FlashFilePort.builder(storage).counter(dir.resolve("counter"));
    try (FlashFilePort port = options.open(); BlurClient blur = BlurClient.open(port)) {
      blur.provision(policy());
      blur.addMetric(RR);
      blur.record(RR.id(), 1);
    }
    final byte[] old = Files.readAllBytes(storage);
    try (FlashFilePort port = options.open(); BlurClient blur = BlurClient.open(port)) {
      blur.addMetric(RR);
      blur.record(RR.id(), 1);
    }
    Files.write(storage, old);
    try (FlashFilePort port = options.open()) {
      final BlurException e = expectStatus(Status.STORAGE_ROLLBACK, () -> BlurClient.open(port),
          "a restored storage image");
      checkEqual("storage rolled back", e.statusName(), "name");
    }
    System.out.println("rollback: the monotonic counter refused an older storage image");
  }

  /** A Port that forwards everything (tests override one method). */
  private static class DelegatingPort implements Port {
    private final Port port;

    DelegatingPort(Port port) {
      this.port = port;
    }

    @Override
    public int blockSize() {
      return port.blockSize();
    }

    @Override
    public int blockCount() {
      return port.blockCount();
    }

    @Override
    public void entropy(byte[] out) throws Exception {
      port.entropy(out);
    }

    @Override
    public void read(int block, int offset, byte[] out) throws Exception {
      port.read(block, offset, out);
    }

    @Override
    public void prog(int block, int offset, byte[] data) throws Exception {
      port.prog(block, offset, data);
    }

    @Override
    public void erase(int block) throws Exception {
      port.erase(block);
    }

    @Override
    public void sync() throws Exception {
      port.sync();
    }
  }

  // ---- HTTP (the collector's API) ----

  private static String post(HttpClient http, String url, String path, String contentType,
      String bearer, byte[] body) throws IOException, InterruptedException {
    final HttpRequest request = HttpRequest.newBuilder(URI.create(url + path))
                                    .header("Content-Type", contentType)
                                    .header("Authorization", "Bearer " + bearer)
                                    .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                                    .build();
    final HttpResponse<String> response =
        http.send(request, HttpResponse.BodyHandlers.ofString());
    check(response.statusCode() == 200,
        "POST " + path + ": " + response.statusCode() + " " + response.body());
    return response.body();
  }

  private static final Pattern TOKEN = Pattern.compile("\"token\"\\s*:\\s*\"([^\"]+)\"");

  /** The device token for this device, from POST /v1/enroll with the enrollment secret. */
  private static String enroll(HttpClient http, String url, BlurClient blur)
      throws IOException, InterruptedException {
    final String secret = System.getenv("BLUR_ENROLLMENT_SECRET");
    check(secret != null, "BLUR_ENROLLMENT_SECRET is not set");
    final String answer = post(http, url, "/v1/enroll", "application/json", secret,
        blur.enrollmentBody().getBytes(StandardCharsets.US_ASCII));
    final Matcher token = TOKEN.matcher(answer);
    check(token.find(), "no token in " + answer);
    return token.group(1);
  }

  // ---- fleet: many devices, one storage directory each ----

  /** Metric 10: rr at 1 nat; metric 11: oue at 2 nats over 8 values. */
  private static final Metric FLEET_RR = Metric.rr(10, NAT);
  private static final Metric FLEET_OUE = Metric.oue(11, 2 * NAT, 8);
  /** Device i's oue value is OUE_VALUES[i % 16]: 0 five times, 1 four times, ... 6 and 7 never. */
  private static final int[] OUE_VALUES = {0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 5};

  private static void fleet(String url, Path root, int devices, int threads, Path truthFile)
      throws Exception {
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    final AtomicLongArray rrTruth = new AtomicLongArray(2);
    final AtomicLongArray oueTruth = new AtomicLongArray(8);
    final long start = System.nanoTime();
    final ExecutorService pool = Executors.newFixedThreadPool(threads);
    final List<Future<?>> done = new ArrayList<>();
    for (int i = 0; i < devices; ++i) {
      final int device = i;
      done.add(pool.submit(() -> {
        // One client per thread: each device lives on the thread that runs it.
        try (BlurClient blur = BlurClient.open(root.resolve("device-" + device))) {
          blur.provision(Policy.builder().lifetimeCapMicros(10L * NAT).build());
          blur.addMetric(FLEET_RR);
          blur.addMetric(FLEET_OUE);
          final int yes = device % 10 == 0 ? 1 : 0; // 10% of the devices say yes
          final int value = OUE_VALUES[device % OUE_VALUES.length];
          blur.record(FLEET_RR.id(), yes);
          blur.record(FLEET_OUE.id(), value);
          final String token = enroll(http, url, blur);
          final Batch batch = blur.pendingBatch();
          checkEqual(2, batch.reports(), "device " + device + "'s batch");
          final String answer = post(http, url, "/v1/reports", "application/x-protobuf", token,
              batch.bytes());
          check(answer.contains("\"accepted\":2"), "device " + device + ": " + answer);
          blur.acknowledge(batch.ackToken());
          checkEqual(0, blur.budget().pendingReports(), "device " + device + " acknowledged");
          rrTruth.incrementAndGet(yes);
          oueTruth.incrementAndGet(value);
        }
        return null;
      }));
    }
    try {
      for (Future<?> f : done) {
        try {
          f.get();
        } catch (java.util.concurrent.ExecutionException e) {
          if (e.getCause() instanceof Failure) throw (Failure) e.getCause();
          throw e;
        }
      }
    } finally {
      pool.shutdownNow();
    }
    final double seconds = (System.nanoTime() - start) / 1e9;
    Files.writeString(truthFile, String.format(Locale.ROOT,
        "{\"devices\": %d, \"rr\": %s, \"oue\": %s}%n", devices, rrTruth, oueTruth));
    System.out.printf(Locale.ROOT,
        "fleet: %d devices provisioned, recorded, enrolled, sent and acknowledged in %.1f s%n",
        devices, seconds);
  }

  // ---- throughput ----

  private static void throughput(Path dir, int count) throws IOException {
    try (BlurClient blur = BlurClient.open(dir)) {
      blur.provision(Policy.builder().lifetimeCapMicros(Long.MAX_VALUE / 2).build());
      blur.addMetric(Metric.rr(1, 100_000)); // 0.1 nat
      final int warmup = 2_000;
      for (int i = 0; i < warmup; ++i) recordAndSend(blur, i);
      final long start = System.nanoTime();
      for (int i = 0; i < count; ++i) recordAndSend(blur, i);
      final double seconds = (System.nanoTime() - start) / 1e9;
      final Budget budget = blur.budget();
      checkEqual((warmup + (long) count) * 100_000, budget.spentMicros(), "spent");
      System.out.printf(Locale.ROOT,
          "jni: %.0f records/s (%d records in %.2f s on %s; each charged and queued durably, "
              + "a batch read and acknowledged every 64)%n",
          count / seconds, count, seconds, dir);
      final int calls = 200_000;
      final long callsStart = System.nanoTime();
      long sink = 0;
      for (int i = 0; i < calls; ++i) sink += blur.budget().spentMicros();
      final double callSeconds = (System.nanoTime() - callsStart) / 1e9;
      check(sink != 0, "budget calls");
      System.out.printf(Locale.ROOT,
          "jni: %.0f budget() calls/s (a native round trip without storage)%n",
          calls / callSeconds);
    }
  }

  /** Records, and every 64 records reads the pending batch and acknowledges it. */
  private static void recordAndSend(BlurClient blur, int i) {
    blur.record(1, i & 1);
    if (i % 64 == 63) {
      final Batch batch = blur.pendingBatch();
      blur.acknowledge(batch.ackToken());
    }
  }
}
