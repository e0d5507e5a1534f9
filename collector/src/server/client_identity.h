// How a device certificate binds its device nonce (mutual TLS, issue 13):
// the certificate, signed by the fleet's CA, carries exactly one
// subjectAltName URI
//
//   urn:blur:device:<the nonce as 16 lower-case hex digits>
//
// e.g. urn:blur:device:00000000000004d2 for nonce 1234.
//
// A SAN URI rather than the subject's CN: the CN is a display name, free
// text that enrollment tools and operators fill as they like (and may
// repeat), and identity in it is deprecated for TLS (RFC 6125). A URI SAN is
// a typed field whose "urn:blur:device:" namespace says what it is: a
// certificate keeps whatever subject the fleet wants, and one made for
// something else (a CN that happens to be 16 hex digits) never passes for a
// device. (SPIFFE binds workload identities the same way.)
//
// Exact form only: a second device URI, another case, other digits, or
// anything around them and the certificate names no device. A certificate
// that can be read two ways names none.
#ifndef BLUR_COLLECTOR_SERVER_CLIENT_IDENTITY_H
#define BLUR_COLLECTOR_SERVER_CLIENT_IDENTITY_H

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace blur::collector::http {

inline constexpr std::string_view kDeviceUriPrefix = "urn:blur:device:";

// "urn:blur:device:" followed by `nonce` as 16 lower-case hex digits.
std::string device_uri(uint64_t nonce);

// The nonce of a URI of exactly that form; nullopt for anything else.
std::optional<uint64_t> parse_device_uri(std::string_view uri);

// The nonce `certificate` binds: its one SAN URI starting with
// "urn:blur:device:" (compared without case, so that a differently cased
// second one still counts as a second), in the exact form. Nullopt if it
// has none, several, or one not in the exact form, or several SAN
// extensions. Says nothing about whether the certificate is to be trusted.
std::optional<uint64_t> device_nonce_of(const X509* certificate);

// After a completed handshake: the nonce of the client's certificate if the
// client presented one and it verified against the server's trust store;
// nullopt otherwise.
std::optional<uint64_t> verified_device_nonce(const SSL* ssl);

}  // namespace blur::collector::http

#endif  // BLUR_COLLECTOR_SERVER_CLIENT_IDENTITY_H
