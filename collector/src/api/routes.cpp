#include "api/routes.h"

#include "api/admin_routes.h"
#include "api/api_description.h"
#include "api/store_device_registry.h"
#include "auth/enrollment_request.h"
#include "ingest/batch_decoder.h"
#include "server/accept_header.h"
#include "util/time_text.h"

namespace blur::collector {

namespace {

// The source address without its port: the enrollment rate limit's key.
std::string_view address_of(std::string_view peer) {
  const auto colon = peer.rfind(':');
  return colon == std::string_view::npos ? peer : peer.substr(0, colon);
}

// Wraps `handler` so that it runs only for a bearer token with `role`.
http::Handler for_role(auth::Authenticator* authenticator, auth::Role role,
                       http::Handler handler) {
  if (authenticator == nullptr) return handler;
  return [authenticator, role, handler = std::move(handler)](const http::Request& request,
                                                             http::Reply reply) {
    if (auto allowed = authenticator->allow(request.header("Authorization"), role); !allowed) {
      return reply(to_http(error_response(allowed.error())));
    }
    handler(request, std::move(reply));
  };
}

// Runs `read` on the pool, or here without one, and answers `reply`.
void run_read(ReadPool* reads, ReadPool::Read read, http::Reply reply) {
  ReadPool::Answer answer = [reply = std::move(reply)](ApiResponse a) {
    reply(to_http(std::move(a)));
  };
  if (reads == nullptr) return answer(read(Cancellation()));
  reads->submit(std::move(read), std::move(answer));
}

// What an estimate or series can answer in: JSON (the default), rows as
// CSV or JSON lines (result_rows.h; application/jsonl is answered as the
// synonym it names).
const std::vector<std::string> kReadMediaTypes = {"application/json", "text/csv",
                                                  "application/x-ndjson", "application/jsonl"};
constexpr ResultFormat kReadFormats[] = {ResultFormat::kJson, ResultFormat::kCsv,
                                         ResultFormat::kJsonLines, ResultFormat::kJsonLines};

using ReadEndpoint = ApiResponse (CollectorApi::*)(const std::string&, const QueryParams&,
                                                   const Cancellation&, ResultFormat) const;

// An estimate or series route: the Accept header chooses the format (406
// if it accepts none of them), the read runs on the pool.
http::Handler read_route(CollectorApi& api, ReadPool* reads, ReadEndpoint endpoint) {
  return [&api, reads, endpoint](const http::Request& request, http::Reply reply) {
    const auto chosen = http::choose_media_type(request.header("Accept"), kReadMediaTypes);
    if (!chosen) {
      ApiResponse refused(406, json_text({{"error",
                                           "this route answers application/json, text/csv, "
                                           "application/x-ndjson or application/jsonl"}}));
      refused.refusal = observe::Reason::kNotAcceptable;
      return reply(to_http(std::move(refused)));
    }
    run_read(
        reads,
        [&api, endpoint, id = request.path_params.at(0), query = request.query,
         format = kReadFormats[*chosen],
         media = kReadMediaTypes[*chosen]](const Cancellation& cancel) {
          ApiResponse answer = (api.*endpoint)(id, query, cancel, format);
          if (answer.status == 200 && media == "application/jsonl") answer.content_type = media;
          return answer;
        },
        std::move(reply));
  };
}

}  // namespace

http::Response to_http(ApiResponse answer) {
  http::Response response;
  response.status = answer.status;
  response.content_type = std::move(answer.content_type);
  response.body = std::move(answer.body);
  if (answer.refusal) response.refusal = observe::reason_name(*answer.refusal);
  if (answer.reports) response.counts.emplace_back("reports", *answer.reports);
  if (answer.status == 401) response.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"blur\"");
  if (answer.status == 429 || answer.status == 503) {
    const uint32_t seconds = answer.retry_after_seconds != 0 ? answer.retry_after_seconds : 1;
    response.headers.emplace_back("Retry-After", std::to_string(seconds));
  }
  return response;
}

void add_collector_routes(http::Server& server, CollectorApi& api, Store& store,
                          auth::Authenticator* authenticator, ReadPool* reads,
                          LiveReload* reload) {
  http::RouteLimits batch_limits;
  batch_limits.max_body_bytes = max_encoded_batch_size();
  batch_limits.content_types = {"application/x-protobuf"};
  batch_limits.body_limit_name = "the largest valid batch";
  // Answered from the group committer's thread after the commit.
  server.route("POST", "/v1/reports", batch_limits,
               [&api, authenticator](const http::Request& request, http::Reply reply) {
                 std::optional<uint64_t> device;
                 if (authenticator != nullptr) {
                   auto nonce = authenticator->device(request.header("Authorization"),
                                                      request.client_device_nonce, unix_now(),
                                                      request.client_certificate_revoked);
                   if (!nonce) return reply(to_http(error_response(nonce.error())));
                   device = nonce.value();
                 }
                 api.post_reports(request.body, device,
                                  [reply = std::move(reply)](ApiResponse answer) {
                                    reply(to_http(std::move(answer)));
                                  });
               });
  if (authenticator != nullptr) {
    http::RouteLimits enroll_limits;
    enroll_limits.max_body_bytes = auth::kMaxEnrollmentRequestBytes;
    enroll_limits.content_types = {"application/json"};
    enroll_limits.body_limit_name = "the enrollment request limit";
    server.route("POST", "/v1/enroll", enroll_limits,
                 [authenticator, &store, &api](const http::Request& request, http::Reply reply) {
                   // Credentials first: a stranger learns nothing of the body's rules.
                   const std::string authorization = request.header("Authorization");
                   if (auto allowed = authenticator->allow(authorization, auth::Role::kEnrollment);
                       !allowed) {
                     return reply(to_http(error_response(allowed.error())));
                   }
                   auto enroll = auth::parse_enrollment_request(request.body);
                   if (!enroll) return reply(to_http(error_response(enroll.error())));
                   StoreDeviceRegistry devices(store, &api.enrollment_times());
                   auto enrollment = authenticator->enroll(
                       authorization, address_of(request.peer), enroll.value(), devices,
                       unix_now());
                   if (!enrollment) return reply(to_http(error_response(enrollment.error())));
                   api.enrolled(enrollment->renewal);
                   reply(to_http(ApiResponse(200, auth::enrollment_answer(enrollment.value()))));
                 });
  }
  const auth::Role reader = auth::Role::kReader;
  server.route("GET", "/v1/metrics", {},
               for_role(authenticator, reader, [&api](const http::Request&, http::Reply reply) {
                 reply(to_http(api.metrics()));
               }));
  server.route("GET", R"(/v1/metrics/([^/]+)/estimate)", {},
               for_role(authenticator, reader, read_route(api, reads, &CollectorApi::estimate)),
               "/v1/metrics/{id}/estimate");
  server.route("GET", R"(/v1/metrics/([^/]+)/series)", {},
               for_role(authenticator, reader, read_route(api, reads, &CollectorApi::series)),
               "/v1/metrics/{id}/series");
  server.route("GET", "/healthz", {},
               [&api](const http::Request&, http::Reply reply) { reply(to_http(api.health())); });
  add_api_description_route(server);
  if (authenticator != nullptr) {
    add_admin_routes(server, store, *authenticator, [authenticator](http::Handler handler) {
      return for_role(authenticator, auth::Role::kAdmin, std::move(handler));
    }, reload);
  }
}

}  // namespace blur::collector
