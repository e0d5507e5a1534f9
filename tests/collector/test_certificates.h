// Certificates for TLS tests, made in the process with OpenSSL's API (P-256
// keys, SHA-256 signatures): CAs, and certificates they sign with the
// subjectAltNames a test wants, malformed ones included (a URI may hold any
// bytes), and CRLs revoking some of them. Each function returns empty
// pointers on failure.
#ifndef BLUR_TESTS_COLLECTOR_TEST_CERTIFICATES_H
#define BLUR_TESTS_COLLECTOR_TEST_CERTIFICATES_H

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace blur_test {

struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct CertificateFree {
  void operator()(X509* certificate) const { X509_free(certificate); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Certificate = std::unique_ptr<X509, CertificateFree>;

struct Credential {
  Key key;
  Certificate certificate;
  explicit operator bool() const { return key && certificate; }
};

struct CertificateSpec {
  std::string common_name = "Blur test";
  bool ca = false;
  std::vector<std::string> uris;       // one subjectAltName URI each, as given
  std::vector<std::string> dns_names;  // subjectAltName DNS names
  std::string ip;                      // a subjectAltName IP address, e.g. "127.0.0.1"
  int san_extensions = 1;              // the SAN extension this many times (if any names)
  long not_before_seconds = -3600;     // from now
  long not_after_seconds = 2 * 86400;  // from now
};

namespace detail {

inline bool add_name(GENERAL_NAMES* names, int type, const std::string& text) {
  GENERAL_NAME* name = GENERAL_NAME_new();
  ASN1_IA5STRING* value = ASN1_IA5STRING_new();
  if (name == nullptr || value == nullptr ||
      ASN1_STRING_set(value, text.data(), static_cast<int>(text.size())) != 1) {
    GENERAL_NAME_free(name);
    ASN1_IA5STRING_free(value);
    return false;
  }
  GENERAL_NAME_set0_value(name, type, value);
  if (sk_GENERAL_NAME_push(names, name) == 0) {
    GENERAL_NAME_free(name);
    return false;
  }
  return true;
}

inline bool add_subject_alt_names(X509* certificate, const CertificateSpec& spec) {
  if (spec.uris.empty() && spec.dns_names.empty() && spec.ip.empty()) return true;
  GENERAL_NAMES* names = sk_GENERAL_NAME_new_null();
  bool ok = names != nullptr;
  for (const std::string& uri : spec.uris) ok = ok && add_name(names, GEN_URI, uri);
  for (const std::string& dns : spec.dns_names) ok = ok && add_name(names, GEN_DNS, dns);
  if (ok && !spec.ip.empty()) {
    GENERAL_NAME* name = GENERAL_NAME_new();
    ASN1_OCTET_STRING* address = a2i_IPADDRESS(spec.ip.c_str());
    ok = name != nullptr && address != nullptr;
    if (ok) {
      GENERAL_NAME_set0_value(name, GEN_IPADD, address);
      ok = sk_GENERAL_NAME_push(names, name) != 0;
      if (!ok) GENERAL_NAME_free(name);
    } else {
      GENERAL_NAME_free(name);
      ASN1_OCTET_STRING_free(address);
    }
  }
  // X509V3_ADD_APPEND: a second copy of the extension when asked for one.
  for (int i = 0; ok && i < spec.san_extensions; ++i) {
    ok = X509_add1_ext_i2d(certificate, NID_subject_alt_name, names, 0, X509V3_ADD_APPEND) == 1;
  }
  GENERAL_NAMES_free(names);
  return ok;
}

inline bool add_extension(X509* certificate, int nid, const char* value) {
  X509_EXTENSION* extension = X509V3_EXT_nconf_nid(nullptr, nullptr, nid, value);
  if (extension == nullptr) return false;
  const bool ok = X509_add_ext(certificate, extension, -1) == 1;
  X509_EXTENSION_free(extension);
  return ok;
}

}  // namespace detail

// Signed by `issuer`, or self-signed if it is null.
inline Credential make_certificate(const CertificateSpec& spec,
                                   const Credential* issuer = nullptr) {
  static long serial = 1;
  Credential made;
  made.key.reset(EVP_EC_gen("P-256"));
  made.certificate.reset(X509_new());
  if (!made) return {};
  X509* certificate = made.certificate.get();
  X509_NAME* subject = X509_get_subject_name(certificate);
  bool ok = X509_set_version(certificate, X509_VERSION_3) == 1 &&
            ASN1_INTEGER_set(X509_get_serialNumber(certificate), serial++) == 1 &&
            X509_gmtime_adj(X509_getm_notBefore(certificate), spec.not_before_seconds) != nullptr &&
            X509_gmtime_adj(X509_getm_notAfter(certificate), spec.not_after_seconds) != nullptr &&
            X509_set_pubkey(certificate, made.key.get()) == 1 &&
            X509_NAME_add_entry_by_txt(
                subject, "CN", MBSTRING_UTF8,
                reinterpret_cast<const unsigned char*>(spec.common_name.c_str()), -1, -1, 0) == 1;
  X509* signer = issuer != nullptr ? issuer->certificate.get() : certificate;
  EVP_PKEY* signer_key = issuer != nullptr ? issuer->key.get() : made.key.get();
  ok = ok && X509_set_issuer_name(certificate, X509_get_subject_name(signer)) == 1;
  if (spec.ca) {
    ok = ok && detail::add_extension(certificate, NID_basic_constraints, "critical,CA:TRUE") &&
         detail::add_extension(certificate, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    ok = ok && detail::add_extension(certificate, NID_basic_constraints, "critical,CA:FALSE");
  }
  ok = ok && detail::add_subject_alt_names(certificate, spec) &&
       X509_sign(certificate, signer_key, EVP_sha256()) > 0;
  if (!ok) return {};
  return made;
}

struct CrlFree {
  void operator()(X509_CRL* crl) const { X509_CRL_free(crl); }
};
using Crl = std::unique_ptr<X509_CRL, CrlFree>;

// A v2 CRL signed by `issuer`'s key in its name, listing `revoked`'s serial
// numbers; its nextUpdate `next_update_seconds` from now (negative: stale).
inline Crl make_crl(const Credential& issuer, const std::vector<const X509*>& revoked,
                    long next_update_seconds = 86400) {
  Crl crl(X509_CRL_new());
  if (!crl) return {};
  ASN1_TIME* last = X509_gmtime_adj(nullptr, next_update_seconds - 86400);
  ASN1_TIME* next = X509_gmtime_adj(nullptr, next_update_seconds);
  bool ok =
      last != nullptr && next != nullptr && X509_CRL_set_version(crl.get(), 1) == 1 &&
      X509_CRL_set_issuer_name(crl.get(), X509_get_subject_name(issuer.certificate.get())) == 1 &&
      X509_CRL_set1_lastUpdate(crl.get(), last) == 1 &&
      X509_CRL_set1_nextUpdate(crl.get(), next) == 1;
  for (const X509* certificate : revoked) {
    X509_REVOKED* entry = X509_REVOKED_new();
    ok = ok && entry != nullptr &&
         X509_REVOKED_set_serialNumber(
             entry, const_cast<ASN1_INTEGER*>(X509_get0_serialNumber(certificate))) == 1 &&
         X509_REVOKED_set_revocationDate(entry, last) == 1 &&
         X509_CRL_add0_revoked(crl.get(), entry) == 1;
    if (!ok) X509_REVOKED_free(entry);
  }
  ASN1_TIME_free(last);
  ASN1_TIME_free(next);
  ok = ok && X509_CRL_sort(crl.get()) == 1 &&
       X509_CRL_sign(crl.get(), issuer.key.get(), EVP_sha256()) > 0;
  if (!ok) return {};
  return crl;
}

// Writes the CRLs to `path` as PEM, atomically (a new file renamed over it,
// as an operator publishing a CRL should).
inline bool write_crls(const std::string& path, const std::vector<const X509_CRL*>& crls) {
  const std::string next = path + ".new";
  FILE* file = std::fopen(next.c_str(), "w");
  if (file == nullptr) return false;
  bool ok = true;
  for (const X509_CRL* crl : crls) {
    ok = ok && PEM_write_X509_CRL(file, const_cast<X509_CRL*>(crl)) == 1;
  }
  return std::fclose(file) == 0 && ok && std::rename(next.c_str(), path.c_str()) == 0;
}

inline bool write_certificate(const std::string& path, const X509* certificate) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return false;
  const bool ok = PEM_write_X509(file, certificate) == 1;
  return std::fclose(file) == 0 && ok;
}

inline bool write_key(const std::string& path, const EVP_PKEY* key) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return false;
  const bool ok = PEM_write_PrivateKey(file, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  return std::fclose(file) == 0 && ok;
}

}  // namespace blur_test

#endif  // BLUR_TESTS_COLLECTOR_TEST_CERTIFICATES_H
