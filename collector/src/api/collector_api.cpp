#include "api/collector_api.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "api/metric_estimate.h"
#include "estimate/device_clustering.h"
#include "ingest/batch_decoder.h"
#include "ingest/batch_validator.h"
#include "mechanisms/mechanism_spec.h"
#include "util/time_text.h"

namespace blur::collector {

namespace {

ApiResponse json_answer(int status, const nlohmann::json& body) {
  return {status, json_text(body)};
}

ApiResponse error_response(int status, std::string message, observe::Reason refusal) {
  ApiResponse answer = json_answer(status, {{"error", std::move(message)}});
  answer.refusal = refusal;
  return answer;
}

// Another batch of the device is in flight (GroupCommitter::busy()): 429
// with Retry-After, refused before the queue, so one device holds at most
// one place in it.
ApiResponse device_busy_response(const Error& busy) {
  ApiResponse answer =
      error_response(http_status(busy), busy.message, observe::Reason::kDeviceBusy);
  answer.retry_after_seconds = busy.retry_after_seconds;
  return answer;
}

const std::string* find(const QueryParams& query, std::string_view name) {
  for (const auto& [key, value] : query) {
    if (key == name) return &value;
  }
  return nullptr;
}

// The parsed common parameters of estimate and series.
struct ReadRequest {
  MetricConfig metric;
  TimeRange range;
  PostProcessing post = PostProcessing::kNone;
  uint32_t top_k = kDefaultTopK;  // word discovery (pem, sfp) only
  std::optional<ValueSelection> values;  // frequency oracles only; none: every value
  const ValueSelection* selection() const { return values ? &*values : nullptr; }
};

Outcome<ReadRequest> read_request(const Store& store, const std::string& id_text,
                                  const QueryParams& query) {
  ReadRequest request;
  if (id_text.empty() || id_text.size() > 10 ||
      id_text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoull(id_text) > UINT32_MAX) {
    return Error{Error::Kind::kNotFound, "unknown metric " + id_text};
  }
  const auto metric = store.metric(static_cast<uint32_t>(std::stoull(id_text)));
  if (!metric) return Error{Error::Kind::kNotFound, "unknown metric " + id_text};
  request.metric = *metric;
  for (const char* name : {"from", "to"}) {
    const std::string* text = find(query, name);
    if (!text) continue;
    const auto t = parse_time(*text);
    if (!t) {
      return invalid(std::string("parameter '") + name + "' must be an RFC 3339 time, a date " +
                     "(YYYY-MM-DD) or Unix seconds, not '" + *text + "'");
    }
    (name[0] == 'f' ? request.range.from : request.range.to) = *t;
  }
  if (request.range.from >= request.range.to) {
    return invalid("parameter 'from' must be before 'to'");
  }
  if (const std::string* text = find(query, "postprocess")) {
    const auto post = post_processing_from_name(*text);
    if (!post)
      return invalid("parameter 'postprocess' must be none or norm-sub, not '" + *text + "'");
    request.post = *post;
  }
  if (const std::string* text = find(query, "top_k")) {
    if (!mechanism_spec(request.metric.mechanism).discovers_words) {
      return invalid("parameter 'top_k' applies to word-discovery (pem, sfp) metrics only");
    }
    if (text->empty() || text->size() > 4 ||
        text->find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(*text) < 1 || std::stoul(*text) > kMaxTopK) {
      return invalid("parameter 'top_k' must be an integer in 1.." + std::to_string(kMaxTopK) +
                     ", not '" + *text + "'");
    }
    request.top_k = static_cast<uint32_t>(std::stoul(*text));
  }
  if (const std::string* text = find(query, "values")) {
    const MechanismSpec& spec = mechanism_spec(request.metric.mechanism);
    if (spec.numeric || spec.discovers_words) {
      return invalid("parameter 'values' applies to frequency-oracle metrics only");
    }
    auto values = ValueSelection::parse(*text, request.metric.domain_size);
    if (!values) return values.error();
    request.values = std::move(values).value();
  }
  for (const auto& [key, value] : query) {
    if (key != "from" && key != "to" && key != "postprocess" && key != "bucket" &&
        key != "top_k" && key != "values") {
      return invalid("unknown parameter '" + key + "'");
    }
  }
  return request;
}

// The quarantine of new devices (MetricConfig::quarantine_seconds): takes
// out of the batch the reports of metrics whose quarantine its device is
// still in. A device without an enrollment time (a certificate device, or
// authentication off) is not quarantined: the fleet's CA vouches for it.
struct Quarantined {
  size_t reports = 0;
  std::string message;  // "metric 2 counts a device's reports from 86400 s after its enrollment"
  std::vector<uint32_t> metrics;  // those held back
};
Quarantined quarantine(Batch& batch, int64_t now, const Store& store) {
  Quarantined out;
  if (!batch.enrolled_at) return out;
  std::map<uint32_t, bool> held;  // metric -> the device is in its quarantine
  auto in_quarantine = [&](uint32_t metric_id) {
    auto found = held.find(metric_id);
    if (found != held.end()) return found->second;
    const auto metric = store.metric(metric_id);
    const bool hold = metric && metric->quarantine_seconds != 0 &&
                      now < *batch.enrolled_at + int64_t{metric->quarantine_seconds};
    if (hold) {
      out.metrics.push_back(metric_id);
      out.message += (out.message.empty() ? "" : "; ") + std::string("metric ") +
                     std::to_string(metric_id) + " counts a device's reports from " +
                     std::to_string(metric->quarantine_seconds) + " s after its enrollment";
    }
    return held.emplace(metric_id, hold).first->second;
  };
  const size_t before = batch.reports.size();
  batch.reports.erase(std::remove_if(batch.reports.begin(), batch.reports.end(),
                                     [&](const IncomingReport& r) {
                                       return in_quarantine(r.metric_id);
                                     }),
                      batch.reports.end());
  out.reports = before - batch.reports.size();
  return out;
}

void describe_range(const TimeRange& range, JsonWriter& out) {
  if (range.from != INT64_MIN) out.member("from", format_time(range.from));
  if (range.to != INT64_MAX) out.member("to", format_time(range.to));
}

// The answer of rows in `format` (kCsv or kJsonLines).
ApiResponse rows_answer(ResultFormat format, std::string rows) {
  ApiResponse answer(200, std::move(rows));
  answer.content_type = format == ResultFormat::kCsv ? "text/csv; charset=utf-8; header=present"
                                                     : "application/x-ndjson";
  return answer;
}

std::optional<int64_t> bound(int64_t t) {
  return t == INT64_MIN || t == INT64_MAX ? std::nullopt : std::optional<int64_t>(t);
}

// Per-metric refusal counts (CollectorMetrics::count_refused_batch) of a
// batch refused whole: under each registered metric it carries reports of.
void count_refused(observe::CollectorMetrics* metrics, const Store& store, const Batch& batch,
                   observe::Reason reason) {
  if (metrics == nullptr) return;
  std::set<uint32_t> ids;
  for (const IncomingReport& report : batch.reports) ids.insert(report.metric_id);
  for (const uint32_t id : ids) {
    if (store.metric(id)) metrics->count_refused_batch(id, reason);
  }
}

// A read that failed: cancelled, or the store's error.
ApiResponse read_failure(const Error& error, const Cancellation& cancel) {
  const Cancellation::Cause cause = cancel.cause();
  return cause != Cancellation::Cause::kNone ? cancelled_response(cause) : error_response(error);
}

}  // namespace

ApiResponse cancelled_response(Cancellation::Cause cause) {
  if (cause == Cancellation::Cause::kStopping) {
    return error_response(unavailable("the collector is stopping; retry later"));
  }
  return error_response(503,
                        "the read did not finish within its deadline (--read-deadline); narrow "
                        "from/to or retry later",
                        observe::Reason::kDeadline);
}

ApiResponse error_response(const Error& error) {
  ApiResponse answer = error_response(http_status(error), error.message, refusal_reason(error));
  answer.retry_after_seconds = error.retry_after_seconds;
  return answer;
}

int http_status(const Error& error) {
  switch (error.kind) {
    case Error::Kind::kInvalid:
      return 400;
    case Error::Kind::kNotFound:
      return 404;
    case Error::Kind::kConflict:
      return 409;
    case Error::Kind::kUnavailable:
      return 503;
    case Error::Kind::kUnauthenticated:
      return 401;
    case Error::Kind::kForbidden:
      return 403;
    case Error::Kind::kTooManyRequests:
      return 429;
  }
  return 500;
}

observe::Reason refusal_reason(const Error& error) {
  switch (error.kind) {
    case Error::Kind::kInvalid:
      return observe::Reason::kMalformed;
    case Error::Kind::kNotFound:  // the API's only missing thing is a metric
      return observe::Reason::kUnknownMetric;
    case Error::Kind::kConflict:
      return observe::Reason::kConflict;
    case Error::Kind::kUnavailable:
      return observe::Reason::kUnavailable;
    case Error::Kind::kUnauthenticated:
      return observe::Reason::kUnauthenticated;
    case Error::Kind::kForbidden:
      return observe::Reason::kForbidden;
    case Error::Kind::kTooManyRequests:  // enrollment; post_reports sets device_busy itself
      return observe::Reason::kEnrollmentRate;
  }
  return observe::Reason::kOther;
}

void CollectorApi::post_reports(std::string_view body, std::optional<uint64_t> device,
                                std::function<void(ApiResponse)> reply) {
  // A device whose batch is in flight is answered before its body is
  // decoded (a third of the cost of the answer): one device re-posting over
  // many connections costs the least. Only for a body that names the sender
  // as the SDK encodes it; one naming another nonce gets its 403 below, and
  // submit() checks every batch again.
  const auto* bytes = reinterpret_cast<const uint8_t*>(body.data());
  if (device && committer_ != nullptr && leading_device_nonce(bytes, body.size()) == device) {
    if (auto busy = committer_->busy(*device)) return reply(device_busy_response(*busy));
  }
  auto batch = std::make_shared<Batch>();
  std::string error;
  if (!decode_batch(bytes, body.size(), batch.get(), &error)) {
    return reply(error_response(400, error, observe::Reason::kMalformed));
  }
  // Refusals from here on are of a decoded batch: counted per metric too.
  auto refuse = [this, &batch, &reply](ApiResponse answer) {
    if (answer.refusal) count_refused(metrics_, store_, *batch, *answer.refusal);
    reply(std::move(answer));
  };
  if (device && batch->device_nonce != *device) {
    return refuse(error_response(
        403, "the batch's device nonce is not the one its credentials were issued for",
        observe::Reason::kForbidden));
  }
  bool unknown_metric = false;
  error = validate_batch(
      *batch, [this](uint32_t id) { return store_.metric(id); }, &unknown_metric);
  if (!error.empty()) {
    return refuse(error_response(
        400, error,
        unknown_metric ? observe::Reason::kUnknownMetric : observe::Reason::kMalformed));
  }
  if (committer_ == nullptr) {
    return refuse(
        error_response(503, "this collector is read-only", observe::Reason::kUnavailable));
  }
  const int64_t now = unix_now();
  if (device) {
    auto enrolled = enrollment_times_.of(*device);
    if (!enrolled) {
      return refuse(error_response(503, "the collector could not look up the device; retry later",
                                   observe::Reason::kUnavailable));
    }
    batch->enrolled_at = enrolled.value();
  }
  if (metrics_ != nullptr) {
    const auto age = observe::CollectorMetrics::device_age(batch->enrolled_at, now);
    std::map<uint32_t, uint64_t> per_metric;
    for (const IncomingReport& report : batch->reports) ++per_metric[report.metric_id];
    for (const auto& [metric_id, count] : per_metric) metrics_->count_received(metric_id, age, count);
  }
  const Quarantined quarantined = quarantine(*batch, now, store_);
  if (quarantined.reports != 0 && metrics_ != nullptr) {
    metrics_->reports_quarantined.add(quarantined.reports);
    metrics_->refusals.count(observe::Reason::kQuarantine);  // per batch
    for (const uint32_t id : quarantined.metrics) {
      metrics_->count_refused_batch(id, observe::Reason::kQuarantine);
    }
  }
  if (batch->reports.empty()) {  // every report was quarantined: nothing to commit
    return reply(json_answer(200, {{"accepted", 0},
                                   {"duplicates", 0},
                                   {"quarantined", quarantined.reports},
                                   {"quarantine", quarantined.message}}));
  }
  // The batch as submitted (quarantined reports out), for per-metric counts.
  auto counted = [metrics = metrics_, &store = store_, batch](observe::Reason reason) {
    count_refused(metrics, store, *batch, reason);
  };
  committer_->submit(
      batch, now,
      [metrics = metrics_, reply, quarantined, counted](const Outcome<BatchOutcome>& outcome) {
        if (!outcome) {
          if (outcome.error().kind == Error::Kind::kTooManyRequests) {
            return reply(device_busy_response(outcome.error()));
          }
          // The committer's words: a full queue, a shutdown, or a failed
          // commit without the store's (group_commit.h).
          const bool invalid = outcome.error().kind == Error::Kind::kInvalid;
          const auto reason = invalid ? observe::Reason::kMalformed : observe::Reason::kUnavailable;
          counted(reason);
          return reply(error_response(invalid ? 400 : 503, outcome.error().message, reason));
        }
        if (outcome->conflict) {
          if (metrics != nullptr) metrics->batches_conflicting.add();
          counted(observe::Reason::kConflict);
          ApiResponse answer = json_answer(409, {{"error", outcome->conflict_message},
                                                 {"report_id", outcome->conflict_report_id}});
          answer.refusal = observe::Reason::kConflict;
          return reply(std::move(answer));
        }
        if (metrics != nullptr) {
          metrics->reports_accepted.add(outcome->inserted);
          metrics->reports_duplicate.add(outcome->duplicates);
          metrics->reports_implausible_time.add(outcome->implausible_time);
        }
        nlohmann::json fields{{"accepted", outcome->inserted}, {"duplicates", outcome->duplicates}};
        // Still a 200: resending would be refused again, so the device must
        // not retry; the answer says what was refused and why. Each such
        // refusal is counted once per batch and once per metric it hit.
        const auto settle = [&](size_t refused, observe::Reason reason,
                                const std::vector<uint32_t>& ids, const char* count_field,
                                const char* reason_field, const std::string& why) {
          if (refused == 0) return;
          if (metrics != nullptr) {
            metrics->refusals.count(reason);
            for (const uint32_t id : ids) metrics->count_refused_batch(id, reason);
          }
          fields[count_field] = refused;
          fields[reason_field] = why;
        };
        settle(outcome->over_limit, observe::Reason::kContributionBound,
               outcome->over_limit_metrics, "over_limit", "limit", outcome->limit_message);
        // A retired metric takes no reports any more.
        settle(outcome->retired, observe::Reason::kRetiredMetric, outcome->retired_metrics,
               "retired", "retirement", outcome->retired_message);
        if (quarantined.reports != 0) {
          fields["quarantined"] = quarantined.reports;
          fields["quarantine"] = quarantined.message;
        }
        ApiResponse answer = json_answer(200, fields);
        answer.reports = outcome->inserted;
        reply(std::move(answer));
      });
}

ApiResponse CollectorApi::metrics() const {
  nlohmann::json list = nlohmann::json::array();
  const auto refused = metrics_ != nullptr
                           ? metrics_->refused_batches()
                           : std::map<uint32_t, std::map<observe::Reason, uint64_t>>{};
  for (const MetricConfig& m : store_.metrics()) {
    nlohmann::json entry = nlohmann::json::parse(config_to_text(m));
    entry["epsilon"] = m.epsilon_micros / 1e6;
    if (const auto retired = store_.retired_at(m.id)) entry["retired_at"] = format_time(*retired);
    if (metrics_ != nullptr) {  // this collector's counts since its start
      nlohmann::json by_reason = nlohmann::json::object();
      if (const auto found = refused.find(m.id); found != refused.end()) {
        for (const auto& [reason, count] : found->second)
          by_reason[observe::reason_name(reason)] = count;
      }
      entry["refused_batches"] = std::move(by_reason);
    }
    list.push_back(entry);
  }
  return json_answer(200, {{"metrics", list}});
}

ApiResponse CollectorApi::estimate(const std::string& metric_id, const QueryParams& query,
                                   const Cancellation& cancel, ResultFormat format) const {
  auto request = read_request(store_, metric_id, query);
  if (!request) return error_response(request.error());
  if (find(query, "bucket")) {
    return error_response(invalid("unknown parameter 'bucket' (see /series)"));
  }
  // The devices' counts before the aggregate: reports committed between
  // the two reads are then uncounted, bounded conservatively.
  Outcome<std::vector<PeriodDeviceCounts>> counts = std::vector<PeriodDeviceCounts>{};
  if (needs_device_clustering(request->metric)) {
    counts = store_.device_counts(request->metric, request->range);
  }
  if (!counts) return error_response(counts.error());
  uint64_t buckets = 0;
  auto aggregate =
      store_.aggregate(request->metric, request->range,
                       needs_device_clustering(request->metric) ? &buckets : nullptr, &cancel);
  if (!aggregate) return read_failure(aggregate.error(), cancel);
  if (cancel.requested()) return cancelled_response(cancel.cause());
  const DeviceClustering clustering =
      metric_clustering(request->metric, aggregate->reports(),
                        counts->empty() ? DeviceCounts{} : counts->front().counts, buckets);
  const DiscoveryControls discovery{request->top_k, &discovery_cache_, &cancel};
  if (format != ResultFormat::kJson) {
    const auto table = estimate_table(aggregate.value(), clustering, request->post, discovery,
                                      request->selection());
    if (!table) return cancelled_response(cancel.cause());
    ResultRows rows(format, request->metric);
    rows.add({"all", bound(request->range.from), bound(request->range.to)}, *table);
    return rows_answer(format, rows.take());
  }
  JsonWriter out;
  out.begin_object();
  if (!write_estimate(aggregate.value(), clustering, request->post, out, discovery,
                      request->selection())) {
    return cancelled_response(cancel.cause());
  }
  describe_range(request->range, out);
  out.end_object();
  return {200, out.take()};
}

ApiResponse CollectorApi::series(const std::string& metric_id, const QueryParams& query,
                                 const Cancellation& cancel, ResultFormat format) const {
  auto request = read_request(store_, metric_id, query);
  if (!request) return error_response(request.error());
  int64_t width = 86400;
  if (const std::string* bucket = find(query, "bucket")) {
    if (*bucket == "hour") {
      width = 3600;
    } else if (*bucket != "day") {
      return error_response(
          invalid("parameter 'bucket' must be hour or day, not '" + *bucket + "'"));
    }
  }
  if (width < request->metric.bucket_seconds) {
    return error_response(invalid("parameter 'bucket': hour is finer than the " +
                                  std::to_string(request->metric.bucket_seconds) +
                                  "-second buckets of " + describe(request->metric)));
  }
  Outcome<std::vector<PeriodDeviceCounts>> counts = std::vector<PeriodDeviceCounts>{};
  if (needs_device_clustering(request->metric)) {
    counts = store_.device_counts(request->metric, request->range, width);  // first, as above
  }
  if (!counts) return error_response(counts.error());
  std::map<int64_t, DeviceCounts> period_counts;
  for (const PeriodDeviceCounts& p : counts.value()) period_counts[p.period_start] = p.counts;
  auto periods = store_.period_aggregates(request->metric, request->range, width,
                                          needs_device_clustering(request->metric), &cancel);
  if (!periods) return read_failure(periods.error(), cancel);
  if (cancel.requested()) return cancelled_response(cancel.cause());
  if (mechanism_spec(request->metric.mechanism).discovers_words &&
      periods->size() > kMaxDiscoverySeriesPeriods) {
    return error_response(invalid(
        "a word-discovery series covers at most " + std::to_string(kMaxDiscoverySeriesPeriods) +
        " periods with reports, one discovery each; this one has " +
        std::to_string(periods->size()) + ": narrow from/to or use bucket=day"));
  }
  JsonWriter out;
  out.begin_object()
      .member("metric_id", request->metric.id)
      .member("bucket", width == 3600 ? "hour" : "day");
  describe_range(request->range, out);
  out.key("series").begin_array();
  if (format == ResultFormat::kJson && !mechanism_spec(request->metric.mechanism).numeric) {
    const size_t listed = request->values ? request->values->values().size()
                                          : size_t{request->metric.domain_size};
    out.reserve(periods->size() * listed * kEstimateJsonBytes);
  }
  const DiscoveryControls discovery{request->top_k, &discovery_cache_, &cancel};
  ResultRows rows(format, request->metric);
  for (const PeriodAggregate& period : periods.value()) {
    if (cancel.requested()) return cancelled_response(cancel.cause());
    const auto counted = period_counts.find(period.start);
    const DeviceClustering clustering = metric_clustering(
        request->metric, period.aggregate.reports(),
        counted == period_counts.end() ? DeviceCounts{} : counted->second, period.buckets);
    if (format != ResultFormat::kJson) {
      const auto table = estimate_table(period.aggregate, clustering, request->post, discovery,
                                        request->selection());
      if (!table) return cancelled_response(cancel.cause());
      rows.add({width == 3600 ? "hour" : "day", period.start, period.start + width}, *table);
      continue;
    }
    out.begin_object()
        .member("start", format_time(period.start))
        .member("start_unix", period.start);
    const bool written = write_estimate(period.aggregate, clustering, request->post, out,
                                        discovery, request->selection());
    out.end_object();
    if (!written) return cancelled_response(cancel.cause());
  }
  if (format != ResultFormat::kJson) return rows_answer(format, rows.take());
  out.end_array().end_object();
  return {200, out.take()};
}

void CollectorApi::enrolled(bool renewal) {
  if (metrics_ == nullptr) return;
  (renewal ? metrics_->enrollments_renewed : metrics_->enrollments_new).add();
}

ApiResponse CollectorApi::health() const { return json_answer(200, {{"status", "ok"}}); }

}  // namespace blur::collector
