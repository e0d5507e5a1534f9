// Export rows (api/result_rows.h) of a crafted word-discovery table whose
// words no device could send today (pem's words are [a-z']) but a label
// could carry tomorrow: commas, quotes, CR/LF line breaks, a byte that is
// not UTF-8, a formula-looking and an empty word. export_test.sh reads the
// output back with Python's csv and json modules.
//
//   result_rows_sample csv|jsonl
#include <cstdio>
#include <iostream>
#include <string>

#include "api/result_rows.h"

int main(int argc, char** argv) {
  using namespace blur::collector;
  const auto format = argc == 2 ? row_format_from_name(argv[1]) : std::nullopt;
  if (!format) {
    std::fprintf(stderr, "usage: result_rows_sample csv|jsonl\n");
    return 2;
  }
  MetricConfig metric;
  metric.id = 7;
  metric.mechanism = MechanismId::kPrefixExtension;
  metric.epsilon_micros = 4000000;
  metric.domain_size = 16;
  EstimateTable table;
  table.shape = EstimateTable::Shape::kWords;
  table.n = 1000;
  table.design_effect = 1.5;
  const char* const words[] = {
      "plain", "a,b", "say \"hi\"", "two\nlines", "cr\r\nlf, \"all\"", "bad \xff byte", "=1+2", ""};
  double estimate = 100;
  for (const char* word : words) {
    table.values.push_back({0, word, {estimate, 10, estimate - 19.6, estimate + 19.6}, {}});
    estimate -= 10;
  }
  ResultRows rows(*format, metric);
  rows.add({"day", 1795000000 - 1795000000 % 86400, 1795000000 - 1795000000 % 86400 + 86400},
           table);
  std::cout << rows.take();
  return 0;
}
