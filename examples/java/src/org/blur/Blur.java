package org.blur;

/** The SDK's version. */
public final class Blur {
  private Blur() {}

  /** "major.minor.patch" of the native SDK (blur_sdk_version). */
  public static String version() {
    final int v = versionCode();
    return (v >>> 16) + "." + ((v >>> 8) & 0xFF) + "." + (v & 0xFF);
  }

  /** The version as batches carry it: major &lt;&lt; 16 | minor &lt;&lt; 8 | patch. */
  public static int versionCode() {
    return Native.sdkVersion();
  }
}
