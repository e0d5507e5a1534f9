package org.blur;

/**
 * The platform under a {@link BlurClient}: entropy, flash-like storage, a
 * clock and optionally a monotonic counter (blur_port in blur.h). The SDK
 * calls these on the thread that called the client, while it holds the
 * client's lock; never call the client from here. Throwing fails the call:
 * the SDK fails closed and the client throws a {@link BlurException} with
 * this exception as its cause.
 *
 * <p>Storage has flash rules: {@link #erase} sets a block to 0xFF (0x00 with
 * {@link #erasedZero}), {@link #prog} writes only erased bytes, {@link #sync}
 * makes them durable. {@link FlashFilePort} is one on a file.
 */
public interface Port {
  /** Bytes per erase block (a multiple of {@link #progSize}). */
  int blockSize();

  /** Erase blocks of the storage. */
  int blockCount();

  /** The program unit in bytes (a power of two); 1 for NOR flash. */
  default int progSize() {
    return 1;
  }

  /** True if erased bytes read 0x00 instead of 0xFF. */
  default boolean erasedZero() {
    return false;
  }

  /** Fills {@code out} with bytes from a cryptographically secure source. */
  void entropy(byte[] out) throws Exception;

  /** Reads {@code out.length} bytes at {@code offset} of {@code block}. */
  void read(int block, int offset, byte[] out) throws Exception;

  /** Programs {@code data} at {@code offset} of {@code block} (erased bytes only). */
  void prog(int block, int offset, byte[] data) throws Exception;

  /** Erases {@code block}. */
  void erase(int block) throws Exception;

  /** Makes every programmed and erased byte durable. */
  void sync() throws Exception;

  /** False: no clock, and then no window budget. */
  default boolean hasClock() {
    return true;
  }

  /** Seconds on a clock that survives reboots (Unix time). */
  default long now() throws Exception {
    return System.currentTimeMillis() / 1000;
  }

  /**
   * True if {@link #counterRead} and {@link #counterAdvance} give a monotonic
   * counter that survives restoring an old copy of the storage: then opening
   * such a copy fails with {@link Status#STORAGE_ROLLBACK}.
   */
  default boolean hasCounter() {
    return false;
  }

  /** The counter's value (non-negative). */
  default long counterRead() throws Exception {
    throw new UnsupportedOperationException("no monotonic counter");
  }

  /** Moves the counter to at least {@code value}. */
  default void counterAdvance(long value) throws Exception {
    throw new UnsupportedOperationException("no monotonic counter");
  }
}
