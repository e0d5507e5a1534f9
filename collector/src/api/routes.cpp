#include "api/routes.h"

#include "ingest/batch_decoder.h"
#include "server/json_response.h"

namespace blur::collector {

namespace {
http::Response to_http(ApiResponse answer) {
  http::Response response;
  response.status = answer.status;
  response.body = std::move(answer.body);
  if (answer.refusal) response.refusal = observe::reason_name(*answer.refusal);
  if (answer.reports) response.counts.emplace_back("reports", *answer.reports);
  return response;
}
}  // namespace

void add_collector_routes(http::Server& server, CollectorApi& api) {
  http::RouteLimits batch_limits;
  batch_limits.max_body_bytes = max_encoded_batch_size();
  batch_limits.content_types = {"application/x-protobuf"};
  batch_limits.body_limit_name = "the largest valid batch";
  // Answered from the group committer's thread after the commit.
  server.route("POST", "/v1/reports", batch_limits,
               [&api](const http::Request& request, http::Reply reply) {
                 api.post_reports(request.body, [reply = std::move(reply)](ApiResponse answer) {
                   reply(to_http(answer));
                 });
               });
  server.route("GET", "/v1/metrics", {},
               [&api](const http::Request&, http::Reply reply) { reply(to_http(api.metrics())); });
  server.route(
      "GET", R"(/v1/metrics/([^/]+)/estimate)", {},
      [&api](const http::Request& request, http::Reply reply) {
        reply(to_http(api.estimate(request.path_params.at(0), request.query)));
      },
      "/v1/metrics/{id}/estimate");
  server.route(
      "GET", R"(/v1/metrics/([^/]+)/series)", {},
      [&api](const http::Request& request, http::Reply reply) {
        reply(to_http(api.series(request.path_params.at(0), request.query)));
      },
      "/v1/metrics/{id}/series");
  server.route("GET", "/healthz", {},
               [&api](const http::Request&, http::Reply reply) { reply(to_http(api.health())); });
}

}  // namespace blur::collector
