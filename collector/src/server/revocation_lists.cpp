#include "server/revocation_lists.h"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>
#include <vector>

namespace blur::collector::http {

namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
template <typename T>
using Owned = std::unique_ptr<T, void (*)(T*)>;

std::string name_der(const X509_NAME* name) {
  unsigned char* der = nullptr;
  const int length = i2d_X509_NAME(name, &der);
  if (length <= 0) return {};
  std::string out(reinterpret_cast<const char*>(der), static_cast<size_t>(length));
  OPENSSL_free(der);
  return out;
}

std::string name_text(const X509_NAME* name) {
  char text[256] = "";
  X509_NAME_oneline(name, text, sizeof text);
  return text;
}

std::string serial_hex(const ASN1_INTEGER* serial) {
  BIGNUM* number = ASN1_INTEGER_to_BN(serial, nullptr);
  char* hex = number != nullptr ? BN_bn2hex(number) : nullptr;
  std::string out = hex != nullptr ? hex : "";
  OPENSSL_free(hex);
  BN_free(number);
  return out;
}

// Every PEM object of `type` in `path` (read by `read`); false if the file
// cannot be opened or holds something else than such objects.
template <typename T, typename Read>
bool read_pem(const std::string& path, Read read, std::vector<Owned<T>>* out, void (*free)(T*)) {
  Bio bio(BIO_new_file(path.c_str(), "r"));
  if (!bio) return false;
  ERR_clear_error();
  while (T* object = read(bio.get(), nullptr, nullptr, nullptr)) out->emplace_back(object, free);
  // The end of the file is "no start line"; anything else is a bad object.
  const unsigned long error = ERR_peek_last_error();
  const bool at_end = error == 0 || ERR_GET_REASON(error) == PEM_R_NO_START_LINE;
  ERR_clear_error();
  return at_end;
}

}  // namespace

Outcome<RevocationLists> RevocationLists::load(const std::string& crl_file,
                                               const std::string& ca_file, int64_t now) {
  std::vector<Owned<X509>> cas;
  if (!read_pem<X509>(ca_file, PEM_read_bio_X509, &cas, X509_free) || cas.empty()) {
    return invalid("cannot read the client CA certificates in " + ca_file);
  }
  std::vector<Owned<X509_CRL>> crls;
  if (!read_pem<X509_CRL>(crl_file, PEM_read_bio_X509_CRL, &crls, X509_CRL_free)) {
    return invalid("cannot read " + crl_file + " as PEM CRLs (-----BEGIN X509 CRL-----)");
  }
  if (crls.empty()) return invalid(crl_file + " holds no CRL");
  RevocationLists out;
  std::string stale;
  time_t at = static_cast<time_t>(now);
  for (size_t i = 0; i < crls.size(); ++i) {
    X509_CRL* crl = crls[i].get();
    const X509_NAME* issuer = X509_CRL_get_issuer(crl);
    const std::string which =
        "CRL " + std::to_string(i + 1) + " of " + crl_file + " (issuer " + name_text(issuer) + ")";
    const X509* signer = nullptr;
    bool issuer_known = false;
    for (const auto& ca : cas) {
      if (X509_NAME_cmp(X509_get_subject_name(ca.get()), issuer) != 0) continue;
      issuer_known = true;
      // A CA whose key usage is listed must allow signing CRLs.
      X509* candidate = ca.get();
      const bool may_sign = (X509_get_extension_flags(candidate) & EXFLAG_KUSAGE) == 0 ||
                            (X509_get_key_usage(candidate) & KU_CRL_SIGN) != 0;
      if (may_sign && X509_CRL_verify(crl, X509_get0_pubkey(candidate)) == 1) signer = candidate;
    }
    ERR_clear_error();
    if (!issuer_known) return invalid(which + ": no certificate of " + ca_file + " is its issuer");
    if (signer == nullptr) {
      return invalid(which + ": its signature does not verify with its issuer's key in " + ca_file);
    }
    const ASN1_TIME* next_update = X509_CRL_get0_nextUpdate(crl);
    if (next_update != nullptr && X509_cmp_time(next_update, &at) < 0) {
      stale += "; " + which + " is past its nextUpdate: publish a new one (it still revokes " +
               "what it lists)";
    }
    const std::string issuer_der = name_der(issuer);
    STACK_OF(X509_REVOKED)* entries = X509_CRL_get_REVOKED(crl);
    for (int e = 0; e < sk_X509_REVOKED_num(entries); ++e) {
      const X509_REVOKED* entry = sk_X509_REVOKED_value(entries, e);
      out.revoked_.emplace(issuer_der, serial_hex(X509_REVOKED_get0_serialNumber(entry)));
    }
  }
  out.summary_ = std::to_string(crls.size()) + (crls.size() == 1 ? " CRL, " : " CRLs, ") +
                 std::to_string(out.revoked_.size()) +
                 (out.revoked_.size() == 1 ? " revoked certificate" : " revoked certificates") +
                 stale;
  return out;
}

bool RevocationLists::revokes(const X509* certificate) const {
  if (certificate == nullptr || revoked_.empty()) return false;
  return revoked_.count({name_der(X509_get_issuer_name(certificate)),
                         serial_hex(X509_get0_serialNumber(certificate))}) != 0;
}

}  // namespace blur::collector::http
