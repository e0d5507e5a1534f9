#include "cli/retire_command.h"

#include <cstdio>
#include <memory>
#include <string>

#include "store/store.h"
#include "util/time_text.h"

namespace blur::collector {

namespace {

struct RetireOptions {
  std::string db;
  uint32_t metric_id = 0;
};

int retire(const RetireOptions& options) {
  auto store = Store::open(options.db, Store::Mode::kReadWrite);
  if (!store) {
    std::fprintf(stderr, "blur-collector: %s\n", store.error().message.c_str());
    return 1;
  }
  auto retired = (*store)->retire_metric(options.metric_id, unix_now());
  if (!retired) {
    std::fprintf(stderr, "blur-collector: %s\n", retired.error().message.c_str());
    return retired.error().kind == Error::Kind::kNotFound ? 2 : 1;
  }
  std::printf("metric %u retired at %s: new reports are refused (collectors serving this "
              "database refuse them from their next metric reload); its estimates stay "
              "readable\n",
              options.metric_id, format_time(retired.value()).c_str());
  return 0;
}

}  // namespace

void add_retire_command(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<RetireOptions>();
  auto* cmd = app.add_subcommand(
      "retire",
      "Retire a metric: its new reports are refused from now on, its estimates stay readable");
  cmd->add_option("--db", options->db, "The database (PATH, sqlite:PATH or postgresql://...)")
      ->required();
  cmd->add_option("--metric", options->metric_id, "The metric's id")->required();
  cmd->callback([options, exit_code] { *exit_code = retire(*options); });
}

}  // namespace blur::collector
