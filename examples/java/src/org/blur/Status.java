package org.blur;

/** The SDK's statuses (blur_status in blur.h), with their names from blur_status_name(). */
public enum Status {
  OK(0),
  INVALID_ARGUMENT(1),
  BUFFER_TOO_SMALL(2),
  ENTROPY_FAILURE(3),
  STORAGE_FAILURE(4),
  STORAGE_CORRUPT(5),
  NOT_PROVISIONED(6),
  ALREADY_PROVISIONED(7),
  /** The lifetime budget. */
  BUDGET_EXHAUSTED(8),
  LEDGER_CLOSED(9),
  ITERATION_CAP(10),
  ENCODING_FAILURE(11),
  CRYPTO_FAILURE(12),
  WINDOW_BUDGET_EXHAUSTED(13),
  METRIC_BUDGET_EXHAUSTED(14),
  CLOCK_FAILURE(15),
  STORAGE_ROLLBACK(16),
  QUEUE_FULL(17),
  MEMO_TABLE_FULL(18),
  TRANSPORT_FAILURE(19),
  NOT_BUILT(20),
  STORAGE_WORN_OUT(21),
  STORAGE_INCOMPATIBLE(22),
  PARTITIONS_OVERLAP(23),
  CONFIGURATION_CHANGED(24);

  private static final Status[] BY_CODE = values();

  static {
    for (Status status : BY_CODE) status.name = Native.statusName(status.code);
  }

  private final int code;
  private String name;

  Status(int code) {
    this.code = code;
  }

  /** The blur_status value. */
  public int code() {
    return code;
  }

  /** The SDK's text for it: "ok", "lifetime budget exhausted", ... */
  public String statusName() {
    return name;
  }

  /** The Status of a blur_status value. */
  public static Status of(int code) {
    if (code < 0 || code >= BY_CODE.length || BY_CODE[code].code != code) {
      throw new IllegalArgumentException("unknown blur_status " + code);
    }
    return BY_CODE[code];
  }
}
