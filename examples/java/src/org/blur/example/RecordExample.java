package org.blur.example;

import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.blur.Blur;
import org.blur.BlurClient;
import org.blur.BlurException;
import org.blur.Budget;
import org.blur.Metric;
import org.blur.Policy;

/**
 * Records one yes/no value with Blur and prints the budget.
 *
 * <pre>
 * java -Djava.library.path=DIR_OF_libblur_jni.so -cp blur.jar:blur-example.jar \
 *     org.blur.example.RecordExample STORAGE_DIR [0|1]
 * </pre>
 */
public final class RecordExample {
  private RecordExample() {}

  /** Opens STORAGE_DIR (provisioning a new device), records the value, prints the budget. */
  public static void main(String[] args) throws IOException {
    final Path storage = Paths.get(args.length > 0 ? args[0] : "blur-storage");
    final int value = args.length > 1 ? Integer.parseInt(args[1]) : 1;
    try (BlurClient blur = BlurClient.open(storage)) {
      if (!blur.isProvisioned()) {
        // 50 nats for the device's life, at most 10 a day.
        blur.provision(Policy.builder()
                           .lifetimeCapMicros(50_000_000)
                           .window(86_400, 10_000_000)
                           .build());
        System.out.println("provisioned a new device (Blur " + Blur.version() + ")");
      }
      blur.addMetric(Metric.rr(1, 1_000_000)); // metric 1: rr at 1 nat, every start
      blur.record(1, value);                   // charged, randomized, queued on storage
      final Budget budget = blur.budget();
      System.out.printf("budget: spent %.6f of %.6f nats (today %.6f), %d reports pending%n",
          budget.spentMicros() / 1e6, budget.lifetimeCapMicros() / 1e6,
          budget.windowSpentMicros() / 1e6, budget.pendingReports());
    } catch (BlurException e) {
      System.err.println("blur: " + e.getMessage()); // e.status(): BUDGET_EXHAUSTED, ...
      System.exit(1);
    }
  }
}
