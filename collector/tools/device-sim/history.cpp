#include "history.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "blur/mechanisms/mechanism.h"
#include "ingest/batch_decoder.h"
#include "simulated_device.h"

namespace blur::sim {

namespace {

constexpr size_t kMaxHistory = 64;  // one batch (kMaxReportsPerBatch)

std::string hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const unsigned char byte : bytes) {
    out += kDigits[byte >> 4];
    out += kDigits[byte & 15];
  }
  return out;
}

bool is_word_metric(const collector::MetricConfig& metric) {
  return metric.mechanism == MechanismId::kPrefixExtension ||
         metric.mechanism == MechanismId::kSequenceFragmentPuzzle;
}

std::vector<std::string> split_values(const std::string& text) {
  std::vector<std::string> values;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    values.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return values;
    start = comma + 1;
  }
}

}  // namespace

Status run_history(const collector::MetricConfig& metric, const std::vector<std::string>& values,
                   uint64_t device_seed, uint64_t budget_micros, DeviceHistory* out) {
  if (values.size() > kMaxHistory) return Status::kInvalidArgument;
  const uint32_t blocks = flash_blocks_for(metric, static_cast<uint32_t>(values.size()));
  if (blocks == 0) return Status::kInvalidArgument;
  SimulatedDevice device(device_seed, blocks);
  BLUR_TRY(device.boot(budget_micros, metric));
  *out = DeviceHistory{};
  for (const std::string& value : values) {
    Status status;
    if (is_word_metric(metric)) {
      status = device.record_word(metric.id, value);
    } else {
      if (value.empty() || value.size() > 9 ||
          value.find_first_not_of("0123456789") != std::string::npos ||
          std::stoul(value) >= metric.domain_size) {
        return Status::kInvalidArgument;
      }
      status = device.record(metric.id, static_cast<uint32_t>(std::stoul(value)));
    }
    out->statuses.push_back(status);
    out->spent_micros.push_back(device.spent_micros());
  }
  std::string batch;
  size_t count = 0;
  uint64_t ack = 0;
  BLUR_TRY(device.pending_batch(&batch, &count, &ack));
  if (count == 0) return Status::kOk;
  collector::Batch decoded;
  std::string error;
  if (!collector::decode_batch(reinterpret_cast<const uint8_t*>(batch.data()), batch.size(),
                               &decoded, &error)) {
    return Status::kEncodingFailure;
  }
  out->reports = std::move(decoded.reports);
  return Status::kOk;
}

std::string history_json_line(uint64_t device, const DeviceHistory& history) {
  nlohmann::json line{{"device", device}, {"spent_micros", history.spent_micros}};
  nlohmann::json statuses = nlohmann::json::array();
  for (const Status status : history.statuses) statuses.push_back(status_name(status));
  line["statuses"] = statuses;
  nlohmann::json reports = nlohmann::json::array();
  for (const collector::IncomingReport& r : history.reports) {
    nlohmann::json report{{"report_id", r.report_id},
                          {"mechanism", mechanism_name(static_cast<MechanismId>(r.mechanism))},
                          {"epsilon_micros", r.epsilon_micros},
                          {"domain_size", r.domain_size}};
    if (r.longitudinal_epsilon_micros != 0) {
      report["longitudinal_epsilon_micros"] = r.longitudinal_epsilon_micros;
    }
    switch (r.payload) {
      case PayloadKind::kBit:
        report["bit"] = r.value;
        break;
      case PayloadKind::kIndex:
        report["index"] = r.value;
        break;
      case PayloadKind::kBits:
        report["bits"] = hex(r.bits);
        break;
      case PayloadKind::kNumber:
        report["value"] = r.number;
        break;
      case PayloadKind::kLocalHash:
        report["local_hash"] = {{"a", r.hash_a}, {"b", r.hash_b}, {"bucket", r.value}};
        break;
      case PayloadKind::kBloom:
        report["bloom"] = {{"cohort", r.value}, {"bits", hex(r.bits)}};
        break;
    }
    reports.push_back(report);
  }
  line["reports"] = reports;
  return line.dump();
}

int history(const Options& o, const std::string& metric_spec, const std::string& values_text,
            const std::string& out_path) {
  const auto metric = collector::parse_metric_spec(metric_spec);
  if (!metric) return fail(metric.error().message);
  const std::vector<std::string> values = split_values(values_text);
  if (values.size() > kMaxHistory) return fail("--values: at most 64 values (one batch)");
  std::ofstream file;
  if (out_path != "-") {
    file.open(out_path);
    if (!file) return fail("cannot write " + out_path);
  }
  std::ostream& out = out_path == "-" ? std::cout : file;
  const uint64_t budget = static_cast<uint64_t>(o.budget_nats * 1e6);
  DeviceHistory device_history;
  for (uint64_t i = 0; i < o.devices; ++i) {
    const Status status =
        run_history(*metric, values, device_seed(o.seed, i), budget, &device_history);
    if (status == Status::kInvalidArgument) {
      return fail("--values: each value must be an index below the metric's domain (" +
                  std::to_string(metric->domain_size) + "), or a word for pem and sfp");
    }
    if (status != Status::kOk) return fail(std::string("device: ") + status_name(status));
    out << history_json_line(i, device_history) << "\n";
  }
  out.flush();
  if (!out) return fail("cannot write " + out_path);
  return 0;
}

}  // namespace blur::sim
