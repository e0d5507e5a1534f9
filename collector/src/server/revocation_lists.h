// The certificate revocation lists of the fleet's device certificates
// (Server::Options::tls_client_crl_file, serve --tls-client-crl): a PEM
// file of one or more CRLs (X.509 v2, RFC 5280 section 5), e.g. one per CA
// of the client CA file. Each must be signed by the certificate of the
// client CA file whose subject is its issuer: a CRL from anyone else is
// refused, so whoever can only write this file cannot revoke (or, by
// replacing it, un-revoke) anything without the CA's key.
//
// A CRL past its nextUpdate still revokes what it lists (never fewer
// certificates than before); summary() says it is stale so the operator
// publishes a new one. Indirect CRLs (entries for another issuer) and delta
// CRLs are not supported: an entry revokes a certificate of the CRL's
// issuer with that serial number.
#ifndef BLUR_COLLECTOR_SERVER_REVOCATION_LISTS_H
#define BLUR_COLLECTOR_SERVER_REVOCATION_LISTS_H

#include <openssl/x509.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "util/outcome.h"

namespace blur::collector::http {

class RevocationLists {
 public:
  // Reads `crl_file` and checks every CRL in it against `ca_file`'s
  // certificates at time `now` (Unix s): kInvalid naming the problem.
  static Outcome<RevocationLists> load(const std::string& crl_file, const std::string& ca_file,
                                       int64_t now);

  // Whether a CRL of `certificate`'s issuer lists its serial number.
  bool revokes(const X509* certificate) const;

  // "2 CRLs, 3 revoked certificates", and which CRL is past its nextUpdate.
  const std::string& summary() const { return summary_; }

 private:
  // (DER of the issuer's name, serial number in hex) of each entry.
  std::set<std::pair<std::string, std::string>> revoked_;
  std::string summary_;
};

}  // namespace blur::collector::http

#endif  // BLUR_COLLECTOR_SERVER_REVOCATION_LISTS_H
