#include "cli/export_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "api/collector_api.h"
#include "api/result_rows.h"
#include "store/store.h"

namespace blur::collector {

namespace {

struct ExportOptions {
  std::string db;
  uint32_t metric = 0;
  std::string from, to, bucket, postprocess = "none", format, out;
  uint32_t top_k = 0;  // 0: the API's default
};

int fail(const std::string& message, int code) {
  std::fprintf(stderr, "blur-collector: %s\n", message.c_str());
  return code;
}

// Writes `text` to `path` whole or not at all (a temporary file renamed).
bool write_file(const std::string& path, const std::string& text, std::string* error) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file.write(text.data(), static_cast<std::streamsize>(text.size()));
    file.close();
    if (!file) {
      *error = "cannot write " + temporary;
      std::filesystem::remove(temporary);
      return false;
    }
  }
  std::error_code renamed;
  std::filesystem::rename(temporary, path, renamed);
  if (renamed) {
    *error = "cannot rename " + temporary + " to " + path + ": " + renamed.message();
    return false;
  }
  return true;
}

int run_export(const ExportOptions& o) {
  const auto format = row_format_from_name(o.format);
  if (!format) return fail("--format must be csv or jsonl", 2);
  auto store = Store::open(o.db, Store::Mode::kReadOnly);
  if (!store) return fail(store.error().message, 1);
  QueryParams query;
  if (!o.from.empty()) query.emplace_back("from", o.from);
  if (!o.to.empty()) query.emplace_back("to", o.to);
  if (!o.bucket.empty()) query.emplace_back("bucket", o.bucket);
  if (o.postprocess != "none") query.emplace_back("postprocess", o.postprocess);
  if (o.top_k != 0) query.emplace_back("top_k", std::to_string(o.top_k));
  // The same endpoint code as the server's answers to Accept: text/csv.
  const CollectorApi api(**store, nullptr);
  const std::string id = std::to_string(o.metric);
  const ApiResponse answer = o.bucket.empty() ? api.estimate(id, query, Cancellation(), *format)
                                              : api.series(id, query, Cancellation(), *format);
  if (answer.status != 200) {
    const auto body = nlohmann::json::parse(answer.body, nullptr, false);
    return fail(body.is_object() ? body.value("error", answer.body) : answer.body, 2);
  }
  if (o.out.empty() || o.out == "-") {
    std::cout << answer.body << std::flush;
    return std::cout ? 0 : fail("cannot write the standard output", 1);
  }
  std::string error;
  if (!write_file(o.out, answer.body, &error)) return fail(error, 1);
  return 0;
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand(
      "export",
      "Write a metric's estimate (or, with --bucket, its series) with intervals and n as CSV or "
      "JSON lines, for analysts' tools (columns: docs/collector.md, \"Export\")");
  cmd->add_option("--db", options->db,
                  "Database: PATH or sqlite:PATH (embedded), or postgresql://...")
      ->required();
  cmd->add_option("--metric", options->metric, "The metric's id")->required();
  cmd->add_option("--from", options->from,
                  "Buckets starting at or after (RFC 3339, YYYY-MM-DD or Unix s)");
  cmd->add_option("--to", options->to, "Buckets starting before");
  cmd->add_option("--bucket", options->bucket,
                  "hour or day: one row set per period (default: one estimate over the range)")
      ->check(CLI::IsMember({"hour", "day"}));
  cmd->add_option("--postprocess", options->postprocess,
                  "norm-sub: also fill the estimate_normsub column (non-negative, summing to n)")
      ->check(CLI::IsMember({"none", "norm-sub"}))
      ->capture_default_str();
  cmd->add_option("--top-k", options->top_k,
                  "Word-discovery (pem, sfp) metrics: at most this many words per period "
                  "(default: the API's, 32)");
  cmd->add_option("--format", options->format, "csv (RFC 4180, with a header) or jsonl")
      ->required()
      ->check(CLI::IsMember({"csv", "jsonl"}));
  cmd->add_option("--out", options->out,
                  "The file to write, whole or not at all (default: standard output)");
  cmd->callback([options] { throw CLI::RuntimeError(run_export(*options)); });
}

}  // namespace blur::collector
