#include "cli/config_command.h"

#include <cstdio>
#include <memory>
#include <string>

#include "cli/serve_options.h"
#include "config/server_file.h"

namespace blur::collector {

namespace {

int check(const std::string& path, bool print) {
  auto fail = [](const Error& error) {
    std::fprintf(stderr, "blur-collector: %s\n", error.message.c_str());
    return 2;
  };
  ServeOptions o;
  const std::vector<Setting> settings = serve_settings(o);
  auto file = load_server_file(path, settings);
  if (!file) return fail(file.error());
  o.config_file = path;
  if (auto checked = check_serve_options(o); !checked) return fail(checked.error());
  auto metrics = configured_metrics(o);
  if (!metrics) return fail(metrics.error());
  std::printf(
      "blur-collector: %s is valid: %zu settings given (the rest at their defaults), "
      "%zu metrics\n",
      path.c_str(), file->given.size(), metrics->size());
  if (print) std::printf("\n%s", server_toml(settings, file->metrics).c_str());
  return 0;
}

}  // namespace

void add_config_command(CLI::App& app) {
  auto* config = app.add_subcommand("config", "The server file (serve --config-file)");
  config->require_subcommand(1);
  auto* check_cmd = config->add_subcommand(
      "check",
      "Validate a server file without serving: exit 0 if serve would take it, 2 with the "
      "problem (the key and where it is) otherwise");
  auto path = std::make_shared<std::string>();
  auto print = std::make_shared<bool>(false);
  check_cmd->add_option("FILE", *path, "The server file")->required();
  check_cmd->add_flag("--print", *print,
                      "Also print the file as serve reads it, every key explicit (the defaults "
                      "included, relative paths made absolute; the metrics file stays a name)");
  check_cmd->callback([path, print] {
    const int code = check(*path, *print);
    std::fflush(stdout);
    if (code == 0) throw CLI::Success();
    throw CLI::RuntimeError(code);
  });
}

}  // namespace blur::collector
