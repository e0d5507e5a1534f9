#include "server/client_identity.h"

#include <openssl/x509v3.h>

#include <cstddef>

namespace blur::collector::http {

namespace {

constexpr std::size_t kNonceDigits = 16;

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;  // the prefix is lower case
  }
  return true;
}

}  // namespace

std::string device_uri(uint64_t nonce) {
  static const char kHex[] = "0123456789abcdef";
  std::string uri(kDeviceUriPrefix);
  uri.resize(kDeviceUriPrefix.size() + kNonceDigits);
  for (std::size_t i = uri.size(); i-- > kDeviceUriPrefix.size(); nonce >>= 4) {
    uri[i] = kHex[nonce & 15];
  }
  return uri;
}

std::optional<uint64_t> parse_device_uri(std::string_view uri) {
  if (uri.size() != kDeviceUriPrefix.size() + kNonceDigits ||
      uri.substr(0, kDeviceUriPrefix.size()) != kDeviceUriPrefix) {
    return std::nullopt;
  }
  uint64_t nonce = 0;
  for (const char c : uri.substr(kDeviceUriPrefix.size())) {
    unsigned digit;
    if (c >= '0' && c <= '9') {
      digit = static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<unsigned>(c - 'a' + 10);
    } else {
      return std::nullopt;
    }
    nonce = nonce << 4 | digit;
  }
  return nonce;
}

std::optional<uint64_t> device_nonce_of(const X509* certificate) {
  if (certificate == nullptr) return std::nullopt;
  int critical = 0;
  // NULL with critical == -2 when the extension occurs more than once.
  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(certificate, NID_subject_alt_name, &critical, nullptr));
  if (names == nullptr) return std::nullopt;
  std::optional<uint64_t> nonce;
  int device_uris = 0;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    if (name->type != GEN_URI) continue;
    const ASN1_IA5STRING* value = name->d.uniformResourceIdentifier;
    // Any bytes, NUL included: the length decides, not a terminator.
    const std::string_view uri(reinterpret_cast<const char*>(ASN1_STRING_get0_data(value)),
                               static_cast<std::size_t>(ASN1_STRING_length(value)));
    if (!starts_with_ignoring_case(uri, kDeviceUriPrefix)) continue;
    ++device_uris;
    nonce = parse_device_uri(uri);
  }
  GENERAL_NAMES_free(names);
  if (device_uris != 1) return std::nullopt;
  return nonce;
}

std::optional<uint64_t> verified_device_nonce(const SSL* ssl) {
  const X509* peer = SSL_get0_peer_certificate(ssl);
  // Without SSL_VERIFY_PEER a certificate that does not verify still
  // completes the handshake; the result says whether it did.
  if (peer == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return std::nullopt;
  return device_nonce_of(peer);
}

}  // namespace blur::collector::http
