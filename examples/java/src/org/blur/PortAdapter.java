package org.blur;

/**
 * What the native port calls (method ids cached by blur_jni.c): forwards to
 * the app's {@link Port} and turns every exception into a failure result
 * (0 success, -1 failure; now and counterRead return -1), keeping the first
 * one as the cause of the {@link BlurException} that follows. While a port
 * method runs, {@link #inPort} is true: the client refuses calls from it.
 */
final class PortAdapter {
  private final Port port;
  private Throwable failure;
  private boolean inPort;

  PortAdapter(Port port) {
    this.port = port;
  }

  /** The first exception since the last call, and forgets it. */
  Throwable takeFailure() {
    final Throwable first = failure;
    failure = null;
    return first;
  }

  /** True while the SDK is calling the port (on this client's thread). */
  boolean inPort() {
    return inPort;
  }

  private int failed(Throwable t) {
    if (failure == null) failure = t;
    return -1;
  }

  int entropy(byte[] out) {
    inPort = true;
    try {
      port.entropy(out);
      return 0;
    } catch (Throwable t) {
      return failed(t);
    } finally {
      inPort = false;
    }
  }

  int read(int block, int offset, byte[] out) {
    inPort = true;
    try {
      port.read(block, offset, out);
      return 0;
    } catch (Throwable t) {
      return failed(t);
    } finally {
      inPort = false;
    }
  }

  int prog(int block, int offset, byte[] data) {
    inPort = true;
    try {
      port.prog(block, offset, data);
      return 0;
    } catch (Throwable t) {
      return failed(t);
    } finally {
      inPort = false;
    }
  }

  int erase(int block) {
    inPort = true;
    try {
      port.erase(block);
      return 0;
    } catch (Throwable t) {
      return failed(t);
    } finally {
      inPort = false;
    }
  }

  int sync() {
    inPort = true;
    try {
      port.sync();
      return 0;
    } catch (Throwable t) {
      return failed(t);
    } finally {
      inPort = false;
    }
  }

  long now() {
    inPort = true;
    try {
      final long seconds = port.now();
      return seconds >= 0 ? seconds : failed(new IllegalStateException("clock before 1970"));
    } catch (Throwable t) {
      return failed(t);
    } finally {
      inPort = false;
    }
  }

  long counterRead() {
    inPort = true;
    try {
      final long value = port.counterRead();
      return value >= 0 ? value : failed(new IllegalStateException("negative counter"));
    } catch (Throwable t) {
      return failed(t);
    } finally {
      inPort = false;
    }
  }

  int counterAdvance(long value) {
    inPort = true;
    try {
      port.counterAdvance(value);
      return 0;
    } catch (Throwable t) {
      return failed(t);
    } finally {
      inPort = false;
    }
  }
}
