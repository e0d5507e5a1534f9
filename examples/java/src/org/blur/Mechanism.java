package org.blur;

/** The SDK's mechanisms (blur_mechanism, from blur/mechanism_table.h). */
public enum Mechanism {
  RR(1, "rr"),
  GRR(2, "grr"),
  SUE(3, "sue"),
  OUE(4, "oue"),
  LAPLACE(5, "laplace"),
  ONEBIT(6, "onebit"),
  HR(7, "hr"),
  OLH(8, "olh"),
  BLH(9, "blh"),
  RAPPOR(10, "rappor"),
  PEM(11, "pem"),
  SFP(12, "sfp"),
  LOLOHA(13, "loloha");

  private final int id;
  private final String shortName;

  Mechanism(int id, String shortName) {
    this.id = id;
    this.shortName = shortName;
  }

  /** The wire value (blur.proto's Mechanism). */
  public int id() {
    return id;
  }

  /** The name of CLIs and the collector's configuration ("rr", "oue", ...). */
  public String shortName() {
    return shortName;
  }
}
