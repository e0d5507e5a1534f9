// The collector's HTTP API (cpp-httplib):
//
//   POST /v1/reports                 body: an encoded blur.ReportBatch
//        200 {"accepted": n, "duplicates": d}   after the batch is committed
//        400 {"error": "..."}                   malformed or inconsistent; nothing stored
//        413                                    body far beyond any valid batch
//        503 {"error": "..."}                   storage failed; nothing acknowledged
//   GET  /v1/metrics                 the registered metrics
//   GET  /v1/metrics/{id}/estimate   debiased estimate (see metric_estimate.h)
//   GET  /healthz                    {"status": "ok"}
#ifndef BLUR_COLLECTOR_SERVER_HTTP_SERVER_H
#define BLUR_COLLECTOR_SERVER_HTTP_SERVER_H

#include <memory>
#include <string>

#include "api/collector_api.h"

namespace httplib {
class Server;
}

namespace blur::collector {

class HttpServer {
 public:
  // Plain HTTP, or HTTPS when `tls` has a certificate and key (PEM files).
  struct Tls {
    std::string certificate_file;
    std::string key_file;
  };
  HttpServer(CollectorApi& api, int threads, const Tls& tls = {});
  // False if the TLS certificate or key could not be loaded.
  bool ok() const;
  ~HttpServer();

  // Binds; port 0 picks a free port. Returns the bound port, or -1.
  int bind(const std::string& address, int port);
  // Serves until stop(); returns false if the server could not run.
  bool serve();
  void stop();

 private:
  CollectorApi& api_;
  std::unique_ptr<httplib::Server> server_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_SERVER_HTTP_SERVER_H
