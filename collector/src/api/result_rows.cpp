#include "api/result_rows.h"

#include <charconv>
#include <cmath>
#include <variant>
#include <vector>

#include "mechanisms/mechanism_spec.h"
#include "util/json_writer.h"
#include "util/time_text.h"

namespace blur::collector {

namespace {

constexpr const char* kValueColumns[] = {
    "metric_id",  "mechanism", "epsilon",          "bucket", "bucket_start",
    "bucket_end", "value",     "estimate",         "stderr", "ci95_low",
    "ci95_high",  "fraction",  "estimate_normsub", "n",      "design_effect"};
constexpr const char* kMeanColumns[] = {"metric_id",    "mechanism",  "epsilon", "bucket",
                                        "bucket_start", "bucket_end", "mean",    "stderr",
                                        "ci95_low",     "ci95_high",  "n",       "design_effect"};

// One cell: absent (empty, null), a number or text.
using Cell = std::variant<std::monostate, uint64_t, double, std::string>;

Cell time_cell(const std::optional<int64_t>& t) { return t ? Cell(format_time(*t)) : Cell(); }

// RFC 4180: a field with a comma, a quote or a line break is quoted, its
// quotes doubled.
void put_csv_text(std::string* out, std::string_view text) {
  const std::string utf8 = well_formed_utf8(text);
  if (utf8.find_first_of(",\"\r\n") == std::string::npos) {
    out->append(utf8);
    return;
  }
  out->push_back('"');
  for (const char c : utf8) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

void put_csv_cell(std::string* out, const Cell& cell) {
  char number[32];
  if (const auto* u = std::get_if<uint64_t>(&cell)) {
    out->append(number, std::to_chars(number, number + sizeof number, *u).ptr);
  } else if (const auto* d = std::get_if<double>(&cell)) {
    // The shortest text that reads back as the same double (as in JSON).
    if (std::isfinite(*d))
      out->append(number, std::to_chars(number, number + sizeof number, *d).ptr);
  } else if (const auto* s = std::get_if<std::string>(&cell)) {
    put_csv_text(out, *s);
  }
}

void put_json_cell(JsonWriter& out, const Cell& cell) {
  if (const auto* u = std::get_if<uint64_t>(&cell)) {
    out.value(*u);
  } else if (const auto* d = std::get_if<double>(&cell)) {
    out.value(*d);  // null if not finite
  } else if (const auto* s = std::get_if<std::string>(&cell)) {
    out.value(std::string_view(*s));
  } else {
    out.raw("null");
  }
}

template <size_t N>
void put_row(ResultFormat format, const char* const (&columns)[N], const std::vector<Cell>& cells,
             std::string* out) {
  if (format == ResultFormat::kCsv) {
    for (size_t i = 0; i < N; ++i) {
      if (i != 0) out->push_back(',');
      put_csv_cell(out, cells[i]);
    }
    out->append("\r\n");
    return;
  }
  JsonWriter line;
  line.begin_object();
  for (size_t i = 0; i < N; ++i) {
    line.key(columns[i]);
    put_json_cell(line, cells[i]);
  }
  line.end_object();
  out->append(line.text());
  out->push_back('\n');
}

}  // namespace

std::optional<ResultFormat> row_format_from_name(std::string_view name) {
  if (name == "csv") return ResultFormat::kCsv;
  if (name == "jsonl") return ResultFormat::kJsonLines;
  return std::nullopt;
}

ResultRows::ResultRows(ResultFormat format, const MetricConfig& metric)
    : format_(format), metric_(metric) {
  if (format_ != ResultFormat::kCsv) return;
  const bool mean = mechanism_spec(metric.mechanism).numeric;
  const auto header = [this](const auto& columns) {
    bool first = true;
    for (const char* column : columns) {
      if (!first) out_.push_back(',');
      out_.append(column);
      first = false;
    }
    out_.append("\r\n");
  };
  if (mean) {
    header(kMeanColumns);
  } else {
    header(kValueColumns);
  }
}

void ResultRows::add(const ResultPeriod& period, const EstimateTable& table) {
  const double n = static_cast<double>(table.n);
  const std::vector<Cell> metric_cells{
      uint64_t{metric_.id},         std::string(blur::mechanism_name(metric_.mechanism)),
      metric_.epsilon_micros / 1e6, std::string(period.bucket),
      time_cell(period.start),      time_cell(period.end)};
  for (const ValueEstimate& v : table.values) {
    std::vector<Cell> cells = metric_cells;
    const CountEstimate& e = v.estimate;
    if (table.shape == EstimateTable::Shape::kMean) {
      cells.insert(cells.end(),
                   {e.count, e.std_error, e.ci95_low, e.ci95_high, table.n, table.design_effect});
      put_row(format_, kMeanColumns, cells, &out_);
      continue;
    }
    cells.push_back(table.shape == EstimateTable::Shape::kWords ? Cell(v.word)
                                                                : Cell(uint64_t{v.value}));
    cells.insert(cells.end(), {e.count, e.std_error, e.ci95_low, e.ci95_high, e.count / n,
                               v.estimate_normsub ? Cell(*v.estimate_normsub) : Cell(), table.n,
                               table.design_effect});
    put_row(format_, kValueColumns, cells, &out_);
  }
}

}  // namespace blur::collector
