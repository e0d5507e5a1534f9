package org.blur;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * A {@link Port} on a file with NOR-flash rules: blocks erase to 0xFF, a
 * program call may only write erased bytes, sync is {@link FileChannel#force}.
 * The file is created erased on first use and locked while open (one client
 * per file). Reads come from a copy of the file in memory (the SDK reads in
 * small pieces, dozens per record: a system call each would cost most of a
 * record's time); every write goes to the file and the copy, and after a
 * failed write every call fails until the file is reopened. Entropy comes
 * from {@link SecureRandom}, time from the system clock; both can be
 * replaced. Optionally a monotonic counter in a second file: keep that one
 * where a restored copy of the storage cannot reach (a real device uses a
 * hardware counter; see ports/posix/posix_port.h).
 */
public final class FlashFilePort implements Port, Closeable {
  /** The default erase block: 4 KiB. */
  public static final int DEFAULT_BLOCK_SIZE = 4096;
  /** The default block count: 2 for the ledger, 6 for the report queue. */
  public static final int DEFAULT_BLOCK_COUNT = 8;

  private final int blockSize;
  private final int blockCount;
  private final RandomAccessFile file;
  private final FileChannel channel;
  private final FileLock lock;
  private final byte[] erased;
  private final byte[] image; // the file's bytes
  private boolean broken; // a write failed: the file may differ from the image
  private final Consumer<byte[]> entropy;
  private final LongSupplier clock;
  private final Path counterFile;

  /** Options for {@link #open()}. */
  public static final class Builder {
    private final Path file;
    private int blockSize = DEFAULT_BLOCK_SIZE;
    private int blockCount = DEFAULT_BLOCK_COUNT;
    private Consumer<byte[]> entropy;
    private LongSupplier clock = () -> System.currentTimeMillis() / 1000;
    private Path counterFile;

    private Builder(Path file) {
      this.file = Objects.requireNonNull(file);
    }

    /** Erase block size in bytes and block count (a file keeps the geometry it was made with). */
    public Builder geometry(int blockSize, int blockCount) {
      if (blockSize <= 0 || blockCount <= 0) throw new IllegalArgumentException("geometry");
      this.blockSize = blockSize;
      this.blockCount = blockCount;
      return this;
    }

    /** The entropy source (default: a {@link SecureRandom}): cryptographically secure. */
    public Builder entropy(Consumer<byte[]> source) {
      this.entropy = Objects.requireNonNull(source);
      return this;
    }

    /** Unix seconds (default: the system clock); null for no clock (no window budget). */
    public Builder clock(LongSupplier seconds) {
      this.clock = seconds;
      return this;
    }

    /** A file holding a monotonic counter (8 bytes, created as 0). */
    public Builder counter(Path file) {
      this.counterFile = Objects.requireNonNull(file);
      return this;
    }

    /** Opens (or creates, erased) the storage file and locks it. */
    public FlashFilePort open() throws IOException {
      final Consumer<byte[]> source = entropy != null ? entropy : new SecureRandom()::nextBytes;
      return new FlashFilePort(this, source);
    }
  }

  /** Options for a storage file. */
  public static Builder builder(Path file) {
    return new Builder(file);
  }

  /** Opens {@code file} with the default geometry, entropy and clock, no counter. */
  public static FlashFilePort open(Path file) throws IOException {
    return builder(file).open();
  }

  private FlashFilePort(Builder options, Consumer<byte[]> entropy) throws IOException {
    this.blockSize = options.blockSize;
    this.blockCount = options.blockCount;
    this.entropy = entropy;
    this.clock = options.clock;
    this.counterFile = options.counterFile;
    this.erased = new byte[blockSize];
    Arrays.fill(erased, (byte) 0xFF);
    final long size = (long) blockSize * blockCount;
    if (size > Integer.MAX_VALUE - 8) throw new IllegalArgumentException("storage too large");
    this.image = new byte[(int) size];
    file = new RandomAccessFile(options.file.toFile(), "rw");
    try {
      channel = file.getChannel();
      lock = lockOf(channel, options.file);
      if (channel.size() == 0) {
        for (int block = 0; block < blockCount; ++block) erase(block);
        channel.force(true);
        syncDirectory(options.file);
      } else if (channel.size() != size) {
        throw new IOException(options.file + " holds " + channel.size() + " bytes, not "
            + blockCount + " blocks of " + blockSize);
      } else {
        readAt(image, 0);
      }
    } catch (IOException | RuntimeException e) {
      file.close();
      throw e;
    }
  }

  private static FileLock lockOf(FileChannel channel, Path path) throws IOException {
    try {
      final FileLock lock = channel.tryLock();
      if (lock == null) throw new IOException(path + " is in use by another process");
      return lock;
    } catch (OverlappingFileLockException e) {
      throw new IOException(path + " is already open in this process", e);
    }
  }

  /** Makes a new file's directory entry durable (where the platform allows it). */
  private static void syncDirectory(Path file) {
    final Path directory = file.toAbsolutePath().getParent();
    if (directory == null) return;
    try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
      dir.force(true);
    } catch (IOException e) {
      // Not every platform opens directories; the file's own force stands.
    }
  }

  private int position(int block, int offset, int size) throws IOException {
    if (broken) throw new IOException("an earlier write failed: reopen the storage");
    if (block < 0 || block >= blockCount || offset < 0 || offset > blockSize
        || size > blockSize - offset) {
      throw new IOException("out of the storage: block " + block + ", offset " + offset
          + ", " + size + " bytes");
    }
    return block * blockSize + offset; // within the image: no overflow
  }

  private void readAt(byte[] out, long at) throws IOException {
    final ByteBuffer buffer = ByteBuffer.wrap(out);
    while (buffer.hasRemaining()) {
      if (channel.read(buffer, at + buffer.position()) < 0) throw new EOFException();
    }
  }

  /** Writes to the file, then to the image. */
  private void writeAt(byte[] data, int at) throws IOException {
    broken = true;
    final ByteBuffer buffer = ByteBuffer.wrap(data);
    while (buffer.hasRemaining()) channel.write(buffer, at + buffer.position());
    System.arraycopy(data, 0, image, at, data.length);
    broken = false;
  }

  @Override
  public int blockSize() {
    return blockSize;
  }

  @Override
  public int blockCount() {
    return blockCount;
  }

  @Override
  public void entropy(byte[] out) {
    entropy.accept(out);
  }

  @Override
  public void read(int block, int offset, byte[] out) throws IOException {
    System.arraycopy(image, position(block, offset, out.length), out, 0, out.length);
  }

  @Override
  public void prog(int block, int offset, byte[] data) throws IOException {
    final int at = position(block, offset, data.length);
    for (int i = 0; i < data.length; ++i) {
      if (image[at + i] != (byte) 0xFF) {
        throw new IOException("NOR rule: byte " + (offset + i) + " of block " + block
            + " is not erased");
      }
    }
    writeAt(data, at);
  }

  @Override
  public void erase(int block) throws IOException {
    writeAt(erased, position(block, 0, blockSize));
  }

  @Override
  public void sync() throws IOException {
    if (broken) throw new IOException("an earlier write failed: reopen the storage");
    channel.force(false); // the file's size never changes after creation
  }

  @Override
  public boolean hasClock() {
    return clock != null;
  }

  @Override
  public long now() {
    return clock.getAsLong();
  }

  @Override
  public boolean hasCounter() {
    return counterFile != null;
  }

  @Override
  public long counterRead() throws IOException {
    if (!Files.exists(counterFile)) return 0;
    final byte[] bytes = Files.readAllBytes(counterFile);
    if (bytes.length != 8) throw new IOException(counterFile + " is not a counter");
    return ByteBuffer.wrap(bytes).getLong();
  }

  @Override
  public void counterAdvance(long value) throws IOException {
    if (value <= counterRead()) return;
    try (FileChannel out = FileChannel.open(counterFile, StandardOpenOption.CREATE,
             StandardOpenOption.WRITE)) {
      final ByteBuffer bytes = ByteBuffer.allocate(8).putLong(0, value);
      while (bytes.hasRemaining()) out.write(bytes, bytes.position());
      out.force(true);
    }
  }

  /** Unlocks and closes the file. */
  @Override
  public void close() throws IOException {
    try {
      lock.release();
    } finally {
      file.close();
    }
  }
}
