// Mutual TLS device identity (issue 13): the device URI of a certificate
// (server/client_identity.h) and the HTTPS server asking for client
// certificates (Options::tls_client_ca_file), with certificates made here
// with OpenSSL and a real OpenSSL client, over TLS 1.2 and TLS 1.3.
#include "server/client_identity.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/http_server.h"
#include "test_certificates.h"
#include "tls_client.h"

namespace {

using namespace blur::collector::http;
using blur_test::CertificateSpec;
using blur_test::Credential;
using blur_test::make_certificate;

constexpr uint64_t kNonce = 0x0123456789abcdefull;
const std::string kUri = "urn:blur:device:0123456789abcdef";

// A device certificate with these subjectAltName URIs, signed by `ca`.
Credential device(const Credential& ca, std::vector<std::string> uris) {
  CertificateSpec spec;
  spec.common_name = "Blur device";
  spec.uris = std::move(uris);
  return make_certificate(spec, &ca);
}

Credential make_ca(const std::string& name) {
  CertificateSpec spec;
  spec.common_name = name;
  spec.ca = true;
  return make_certificate(spec);
}

TEST(DeviceUri, WritesSixteenLowerCaseHexDigits) {
  EXPECT_EQ(device_uri(kNonce), kUri);
  EXPECT_EQ(device_uri(0), "urn:blur:device:0000000000000000");
  EXPECT_EQ(device_uri(1234), "urn:blur:device:00000000000004d2");
  EXPECT_EQ(device_uri(UINT64_MAX), "urn:blur:device:ffffffffffffffff");
}

TEST(DeviceUri, ParsesItsOwnForm) {
  for (const uint64_t nonce : {uint64_t{0}, uint64_t{1}, kNonce, uint64_t{UINT64_MAX}}) {
    EXPECT_EQ(parse_device_uri(device_uri(nonce)), nonce);
  }
}

TEST(DeviceUri, RefusesEveryOtherForm) {
  const std::vector<std::string> malformed = {
      "",
      "urn:blur:device:",
      "urn:blur:device:0123456789ABCDEF",                    // upper-case digits
      "URN:BLUR:DEVICE:0123456789abcdef",                    // upper-case prefix
      "urn:blur:device:123456789abcdef",                     // 15 digits
      "urn:blur:device:00123456789abcdef",                   // 17 digits
      "urn:blur:device:0123456789abcdeg",                    // not hex
      "urn:blur:device:+123456789abcdef",                    // a sign
      "urn:blur:device: 123456789abcdef",                    // a blank
      " urn:blur:device:0123456789abcdef",                   // something before
      "urn:blur:device:0123456789abcdef/",                   // something after
      "urn:blur:devices:0123456789abcdef",                   // another name
      "urn:blur:device:0x23456789abcdef",                    // a radix prefix
      std::string("urn:blur:device:0123456789abcde\0", 32),  // a NUL
  };
  for (const std::string& uri : malformed) {
    EXPECT_EQ(parse_device_uri(uri), std::nullopt) << uri;
  }
}

class DeviceNonceOf : public ::testing::Test {
 protected:
  Credential ca_ = make_ca("Fleet CA");
};

TEST_F(DeviceNonceOf, ReadsTheOneDeviceUri) {
  ASSERT_TRUE(ca_);
  const Credential alone = device(ca_, {kUri});
  ASSERT_TRUE(alone);
  EXPECT_EQ(device_nonce_of(alone.certificate.get()), kNonce);
  // Other names beside it do not matter.
  CertificateSpec spec;
  spec.uris = {"https://fleet.example/devices/7", kUri, "urn:other:thing"};
  spec.dns_names = {"device-7.fleet.example"};
  const Credential among = make_certificate(spec, &ca_);
  ASSERT_TRUE(among);
  EXPECT_EQ(device_nonce_of(among.certificate.get()), kNonce);
}

TEST_F(DeviceNonceOf, NoneWithoutExactlyOneWellFormedDeviceUri) {
  const std::vector<std::vector<std::string>> cases = {
      {},                                                       // no SAN extension at all
      {"https://fleet.example/devices/7"},                      // no device URI
      {kUri, kUri},                                             // the same twice
      {kUri, device_uri(kNonce + 1)},                           // two devices
      {kUri, "URN:Blur:Device:0123456789abcdef"},               // a second, in another case
      {kUri, "urn:blur:device:0123456789abcdef0"},              // a second, malformed
      {"urn:blur:device:0123456789ABCDEF"},                     // malformed
      {"urn:blur:device:1234"},                                 // too short
      {std::string("urn:blur:device:0123456789abcdef\0", 33)},  // a NUL after it
  };
  for (const auto& uris : cases) {
    const Credential certificate = device(ca_, uris);
    ASSERT_TRUE(certificate);
    EXPECT_EQ(device_nonce_of(certificate.certificate.get()), std::nullopt)
        << ::testing::PrintToString(uris);
  }
}

TEST_F(DeviceNonceOf, NoneFromTheCommonName) {
  CertificateSpec spec;
  spec.common_name = "0123456789abcdef";
  const Credential certificate = make_certificate(spec, &ca_);
  ASSERT_TRUE(certificate);
  EXPECT_EQ(device_nonce_of(certificate.certificate.get()), std::nullopt);
  spec.common_name = kUri;
  const Credential uri_as_name = make_certificate(spec, &ca_);
  ASSERT_TRUE(uri_as_name);
  EXPECT_EQ(device_nonce_of(uri_as_name.certificate.get()), std::nullopt);
}

TEST_F(DeviceNonceOf, NoneWithTwoSubjectAltNameExtensions) {
  CertificateSpec spec;
  spec.uris = {kUri};
  spec.san_extensions = 2;
  const Credential certificate = make_certificate(spec, &ca_);
  ASSERT_TRUE(certificate);
  EXPECT_EQ(X509_get_ext_count(certificate.certificate.get()), 3);  // basicConstraints + 2
  EXPECT_EQ(device_nonce_of(certificate.certificate.get()), std::nullopt);
}

// A real HTTPS server on a free loopback port, asking for client
// certificates from the fleet's CA; GET /whoami answers the request's
// client_device_nonce in hex, or "none". Parameter: the TLS version.
class MutualTls : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    std::signal(SIGPIPE, SIG_IGN);  // the client may write to a refused connection
    char pattern[] = "/tmp/blur-mtls-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    server_ca_ = make_ca("Blur test server CA");
    fleet_ca_ = make_ca("Blur test fleet CA");
    ASSERT_TRUE(server_ca_ && fleet_ca_);
    CertificateSpec spec;
    spec.common_name = "localhost";
    spec.dns_names = {"localhost"};
    spec.ip = "127.0.0.1";
    server_ = make_certificate(spec, &server_ca_);
    ASSERT_TRUE(server_);
    ASSERT_TRUE(
        blur_test::write_certificate(dir_ + "/server-ca.pem", server_ca_.certificate.get()));
    ASSERT_TRUE(blur_test::write_certificate(dir_ + "/fleet-ca.pem", fleet_ca_.certificate.get()));
    ASSERT_TRUE(blur_test::write_certificate(dir_ + "/server.pem", server_.certificate.get()));
    ASSERT_TRUE(blur_test::write_key(dir_ + "/server.key", server_.key.get()));
  }
  void TearDown() override {
    release_held();
    if (http_) http_->stop(std::chrono::seconds(5));
    if (thread_.joinable()) thread_.join();
    http_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }

  Server::Options options(bool client_ca) const {
    Server::Options o;
    o.port = 0;
    o.threads = 2;
    o.tls_certificate_file = dir_ + "/server.pem";
    o.tls_key_file = dir_ + "/server.key";
    if (client_ca) o.tls_client_ca_file = dir_ + "/fleet-ca.pem";
    return o;
  }

  void serve(Server::Options o) {
    http_ = std::make_unique<Server>(std::move(o));
    http_->route("GET", "/whoami", {}, [this](const Request& request, Reply reply) {
      ++handled_;
      Response response;
      response.content_type = "text/plain";
      response.body = request.client_certificate_revoked ? "revoked"
                      : request.client_device_nonce
                          ? device_uri(*request.client_device_nonce).substr(kDeviceUriPrefix.size())
                          : "none";
      reply(std::move(response));
    });
    // Answered by release_held() only.
    http_->route("GET", "/held", {}, [this](const Request&, Reply reply) {
      std::lock_guard<std::mutex> lock(mutex_);
      held_.push_back(std::move(reply));
    });
    std::string error;
    ASSERT_TRUE(http_->start(&error)) << error;
    thread_ = std::thread([this] { http_->run(); });
  }
  std::size_t held_count() {
    std::lock_guard<std::mutex> lock(mutex_);
    return held_.size();
  }
  void release_held() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Reply& reply : held_) reply(Response{});
    held_.clear();
  }

  blur_test::TlsExchange whoami(const Credential* client, const SSL_SESSION* resume = nullptr,
                                int requests = 1) {
    blur_test::TlsClientOptions o;
    o.port = http_->port();
    o.ca_file = dir_ + "/server-ca.pem";
    o.client = client;
    o.version = GetParam();
    o.resume = resume;
    std::string request;
    for (int i = 1; i <= requests; ++i) {
      request += "GET /whoami HTTP/1.1\r\nHost: localhost\r\n";
      request += i == requests ? "Connection: close\r\n\r\n" : "\r\n";
    }
    return blur_test::tls_exchange(o, request);
  }
  // One GET of `path` on a connection of its own.
  blur_test::TlsExchange get(const Credential* client, const std::string& path) {
    blur_test::TlsClientOptions o;
    o.port = http_->port();
    o.ca_file = dir_ + "/server-ca.pem";
    o.client = client;
    o.version = GetParam();
    return blur_test::tls_exchange(
        o, "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
  }

  // The bodies of the answers in `exchange`, each of which must be a 200.
  static std::vector<std::string> bodies(const blur_test::TlsExchange& exchange) {
    std::vector<std::string> found;
    std::size_t at = 0;
    while ((at = exchange.answer.find("HTTP/1.1 ", at)) != std::string::npos) {
      EXPECT_EQ(exchange.answer.compare(at, 12, "HTTP/1.1 200"), 0) << exchange.answer;
      const std::size_t body = exchange.answer.find("\r\n\r\n", at) + 4;
      const std::size_t end = exchange.answer.find("HTTP/1.1 ", body);
      found.push_back(exchange.answer.substr(
          body, (end == std::string::npos ? exchange.answer.size() : end) - body));
      at = body;
    }
    return found;
  }

  std::string dir_;
  Credential server_ca_, fleet_ca_, server_;
  std::unique_ptr<Server> http_;
  std::thread thread_;
  std::atomic<int> handled_{0};
  std::mutex mutex_;
  std::vector<Reply> held_;
};

TEST_P(MutualTls, AFleetCertificateGivesItsNonceToTheHandler) {
  serve(options(true));
  const Credential client = device(fleet_ca_, {kUri});
  ASSERT_TRUE(client);
  const auto exchange = whoami(&client);
  ASSERT_TRUE(exchange.handshake) << exchange.error;
  EXPECT_EQ(exchange.error, "");
  EXPECT_EQ(bodies(exchange), std::vector<std::string>{"0123456789abcdef"});
}

TEST_P(MutualTls, EveryRequestOfTheConnectionCarriesTheNonce) {
  serve(options(true));
  const Credential client = device(fleet_ca_, {device_uri(7)});
  ASSERT_TRUE(client);
  const auto exchange = whoami(&client, nullptr, 3);
  ASSERT_TRUE(exchange.handshake) << exchange.error;
  EXPECT_EQ(bodies(exchange), std::vector<std::string>(3, "0000000000000007"));
}

TEST_P(MutualTls, AClientWithoutCertificateIsServedWithoutNonce) {
  serve(options(true));
  const auto exchange = whoami(nullptr);
  ASSERT_TRUE(exchange.handshake) << exchange.error;
  EXPECT_EQ(exchange.error, "");
  EXPECT_EQ(bodies(exchange), std::vector<std::string>{"none"});
}

TEST_P(MutualTls, ACertificateOfAnotherCaFailsTheHandshake) {
  serve(options(true));
  const Credential other_ca = make_ca("Someone else");
  ASSERT_TRUE(other_ca);
  const Credential client = device(other_ca, {kUri});
  ASSERT_TRUE(client);
  const auto exchange = whoami(&client);
  EXPECT_EQ(exchange.answer, "");
  // The server's alert, seen by the client: in SSL_connect (TLS 1.2) or in
  // the first read (TLS 1.3, where the client finishes first).
  EXPECT_NE(exchange.error.find("unknown ca"), std::string::npos) << exchange.error;
  EXPECT_EQ(handled_.load(), 0);
}

TEST_P(MutualTls, AnExpiredFleetCertificateFailsTheHandshake) {
  serve(options(true));
  CertificateSpec spec;
  spec.uris = {kUri};
  spec.not_before_seconds = -2 * 86400;
  spec.not_after_seconds = -86400;
  const Credential client = make_certificate(spec, &fleet_ca_);
  ASSERT_TRUE(client);
  const auto exchange = whoami(&client);
  EXPECT_EQ(exchange.answer, "");
  EXPECT_NE(exchange.error.find("certificate expired"), std::string::npos) << exchange.error;
  EXPECT_EQ(handled_.load(), 0);
}

TEST_P(MutualTls, AFleetCertificateWithoutOneWellFormedDeviceUriGivesNoNonce) {
  serve(options(true));
  const std::vector<std::vector<std::string>> cases = {
      {},
      {kUri, device_uri(kNonce + 1)},
      {"urn:blur:device:0123456789ABCDEF"},
  };
  for (const auto& uris : cases) {
    const Credential client = device(fleet_ca_, uris);
    ASSERT_TRUE(client);
    const auto exchange = whoami(&client);
    ASSERT_TRUE(exchange.handshake) << exchange.error;
    EXPECT_EQ(bodies(exchange), std::vector<std::string>{"none"}) << ::testing::PrintToString(uris);
  }
}

TEST_P(MutualTls, AResumedSessionKeepsItsIdentity) {
  serve(options(true));
  const Credential client = device(fleet_ca_, {kUri});
  ASSERT_TRUE(client);
  const auto first = whoami(&client);
  ASSERT_TRUE(first.handshake) << first.error;
  ASSERT_TRUE(first.session);
  const auto second = whoami(&client, first.session.get());
  ASSERT_TRUE(second.handshake) << second.error;
  EXPECT_TRUE(second.resumed);
  EXPECT_EQ(bodies(second), std::vector<std::string>{"0123456789abcdef"});
  // A session without a certificate resumes without one, even when the
  // client now holds one.
  const auto anonymous = whoami(nullptr);
  ASSERT_TRUE(anonymous.session);
  const auto resumed = whoami(&client, anonymous.session.get());
  ASSERT_TRUE(resumed.handshake) << resumed.error;
  EXPECT_TRUE(resumed.resumed);
  EXPECT_EQ(bodies(resumed), std::vector<std::string>{"none"});
}

// A device certificate holds at most max_connections_per_device
// connections: past it, the next is answered 503 "source_connections" after
// its handshake, its request never handled, while other devices and clients
// without a certificate are served; once the device's connections close it
// is served again.
TEST_P(MutualTls, ADeviceCertificateHoldsAtMostItsConnections) {
  Server::Options o = options(true);
  o.max_connections_per_device = 2;
  serve(o);
  const Credential client = device(fleet_ca_, {kUri});
  const Credential other = device(fleet_ca_, {device_uri(7)});
  ASSERT_TRUE(client && other);
  std::vector<std::future<blur_test::TlsExchange>> holding;
  for (int i = 0; i < 2; ++i) {
    holding.push_back(std::async(std::launch::async, [&] { return get(&client, "/held"); }));
  }
  for (int i = 0; i < 1000 && held_count() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(held_count(), 2u);
  const int handled = handled_;

  const auto third = whoami(&client);
  ASSERT_TRUE(third.handshake) << third.error;
  EXPECT_EQ(third.answer.rfind("HTTP/1.1 503 ", 0), 0u) << third.answer;
  EXPECT_NE(third.answer.find("Retry-After: 1\r\n"), std::string::npos) << third.answer;
  EXPECT_NE(third.answer.find("limit of 2 connections per device"), std::string::npos)
      << third.answer;
  EXPECT_EQ(handled_.load(), handled) << "the refused connection's request was handled";
  EXPECT_EQ(bodies(whoami(&other)), std::vector<std::string>{"0000000000000007"});
  EXPECT_EQ(bodies(whoami(nullptr)), std::vector<std::string>{"none"});

  release_held();
  for (auto& held : holding) {
    const auto exchange = held.get();
    EXPECT_EQ(exchange.answer.rfind("HTTP/1.1 200 ", 0), 0u) << exchange.error << exchange.answer;
  }
  for (int i = 0; i < 500 && http_->open_connections() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(bodies(whoami(&client)), std::vector<std::string>{"0123456789abcdef"});
}

TEST_P(MutualTls, WithoutAClientCaNoCertificateIsAskedFor) {
  serve(options(false));
  const Credential client = device(fleet_ca_, {kUri});
  ASSERT_TRUE(client);
  const auto exchange = whoami(&client);
  ASSERT_TRUE(exchange.handshake) << exchange.error;
  EXPECT_EQ(bodies(exchange), std::vector<std::string>{"none"});
}

TEST_P(MutualTls, StartRefusesAClientCaItCannotUse) {
  Server::Options plain;
  plain.port = 0;
  plain.tls_client_ca_file = dir_ + "/fleet-ca.pem";
  Server without_tls(plain);
  std::string error;
  EXPECT_FALSE(without_tls.start(&error));
  EXPECT_EQ(error, "a client CA needs HTTPS (a TLS certificate and key)");

  Server::Options missing = options(true);
  missing.tls_client_ca_file = dir_ + "/no-such-ca.pem";
  Server unreadable(missing);
  error.clear();
  EXPECT_FALSE(unreadable.start(&error));
  EXPECT_NE(error.find("cannot load the client CA"), std::string::npos) << error;
}

// Revocation (Options::tls_client_crl_file): the handshake completes and
// the request says the certificate is revoked, with no nonce.
TEST_P(MutualTls, ACertificateOnTheCrlIsMarkedRevokedAndOthersAreNot) {
  const Credential revoked = device(fleet_ca_, {device_uri(1)});
  const Credential kept = device(fleet_ca_, {device_uri(2)});
  ASSERT_TRUE(revoked && kept);
  const auto crl = blur_test::make_crl(fleet_ca_, {revoked.certificate.get()});
  ASSERT_TRUE(crl);
  ASSERT_TRUE(blur_test::write_crls(dir_ + "/fleet.crl", {crl.get()}));
  Server::Options o = options(true);
  o.tls_client_crl_file = dir_ + "/fleet.crl";
  serve(o);
  const auto refused = whoami(&revoked, nullptr, 2);
  ASSERT_TRUE(refused.handshake) << refused.error;
  EXPECT_EQ(bodies(refused), std::vector<std::string>(2, "revoked"));
  EXPECT_EQ(bodies(whoami(&kept)), std::vector<std::string>{"0000000000000002"});
  EXPECT_EQ(bodies(whoami(nullptr)), std::vector<std::string>{"none"});
}

TEST_P(MutualTls, TheCrlIsReadAgainWhenItChangesAndABadOneLeavesTheLastInForce) {
  const Credential client = device(fleet_ca_, {kUri});
  ASSERT_TRUE(client);
  const auto empty = blur_test::make_crl(fleet_ca_, {});
  const auto revoking = blur_test::make_crl(fleet_ca_, {client.certificate.get()});
  ASSERT_TRUE(empty && revoking);
  const std::string path = dir_ + "/fleet.crl";
  ASSERT_TRUE(blur_test::write_crls(path, {empty.get()}));
  Server::Options o = options(true);
  o.tls_client_crl_file = path;
  o.tls_client_crl_reload_interval = std::chrono::milliseconds(50);
  serve(o);
  EXPECT_EQ(bodies(whoami(&client)), std::vector<std::string>{"0123456789abcdef"});
  // Each look needs a request (no thread of its own): poll with requests.
  auto wait_for = [&](const std::string& body) {
    const auto start = std::chrono::steady_clock::now();
    while (bodies(whoami(&client)) != std::vector<std::string>{body}) {
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(30)) return -1.0;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  ASSERT_TRUE(blur_test::write_crls(path, {revoking.get()}));
  const double took = wait_for("revoked");
  ASSERT_GE(took, 0) << "the new CRL was never taken in";
  std::printf("revoked %.0f ms after the CRL was replaced (reload interval 50 ms)\n", took);
  // Garbage, or a CRL of another CA with the fleet CA's name (a forged
  // signature): refused, the revoking CRL stays in force.
  const Credential impostor = make_ca("Blur test fleet CA");
  ASSERT_TRUE(impostor);
  const auto forged = blur_test::make_crl(impostor, {});
  ASSERT_TRUE(forged);
  ASSERT_TRUE(blur_test::write_crls(path, {forged.get()}));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(bodies(whoami(&client)), std::vector<std::string>{"revoked"});
  std::ofstream(path + ".new") << "not a CRL\n";
  ASSERT_EQ(std::rename((path + ".new").c_str(), path.c_str()), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(bodies(whoami(&client)), std::vector<std::string>{"revoked"});
  // A stale CRL (past its nextUpdate) that no longer lists it: taken in.
  const auto stale = blur_test::make_crl(fleet_ca_, {}, -60);
  ASSERT_TRUE(stale);
  ASSERT_TRUE(blur_test::write_crls(path, {stale.get()}));
  EXPECT_GE(wait_for("0123456789abcdef"), 0);
}

TEST_P(MutualTls, StartRefusesACrlItCannotUse) {
  const auto crl = blur_test::make_crl(fleet_ca_, {});
  const Credential other_ca = make_ca("Someone else");
  const Credential impostor = make_ca("Blur test fleet CA");
  ASSERT_TRUE(crl && other_ca && impostor);
  const auto other = blur_test::make_crl(other_ca, {});
  const auto forged = blur_test::make_crl(impostor, {});
  ASSERT_TRUE(other && forged);
  struct Case {
    std::string name;
    std::vector<const X509_CRL*> crls;
    bool client_ca;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"no client CA", {crl.get()}, false, "a client CRL needs a client CA"},
      {"another CA's", {crl.get(), other.get()}, true, "is its issuer"},
      {"forged", {forged.get()}, true, "signature does not verify"},
      {"empty file", {}, true, "holds no CRL"},
  };
  for (const Case& c : cases) {
    const std::string path = dir_ + "/" + c.name + ".crl";
    ASSERT_TRUE(blur_test::write_crls(path, c.crls));
    Server::Options o = options(c.client_ca);
    o.tls_client_crl_file = path;
    Server server(o);
    std::string error;
    EXPECT_FALSE(server.start(&error)) << c.name;
    EXPECT_NE(error.find(c.error), std::string::npos) << c.name << ": " << error;
  }
}

INSTANTIATE_TEST_SUITE_P(Tls, MutualTls, ::testing::Values(TLS1_2_VERSION, TLS1_3_VERSION),
                         [](const ::testing::TestParamInfo<int>& version) {
                           return version.param == TLS1_2_VERSION ? std::string("Tls12")
                                                                  : std::string("Tls13");
                         });

}  // namespace
