#include "cli/serve_options.h"

#include <fstream>

#include "auth/credentials.h"
#include "config/metric_rules.h"
#include "config/metrics_file.h"
#include "config/server_file.h"

namespace blur::collector {

std::vector<CLI::Option*> add_setting_flags(CLI::App& serve, const std::vector<Setting>& settings) {
  std::vector<CLI::Option*> options;
  for (const Setting& s : settings) {
    const std::string help = s.help + " [" + s.name() + "]";
    const bool ranged = std::isfinite(s.min) || std::isfinite(s.max);
    CLI::Option* option = std::visit(
        [&](auto* field) -> CLI::Option* {
          using T = std::remove_pointer_t<decltype(field)>;
          if constexpr (std::is_same_v<T, bool>) {
            if (s.form == Setting::Form::kFlag) return serve.add_flag(s.flags, *field, help);
            return serve.add_option(s.flags, *field, help);
          } else if constexpr (std::is_same_v<T, std::string>) {
            return serve.add_option(s.flags, *field, help);
          } else {
            CLI::Option* added = serve.add_option(s.flags, *field, help);
            if (s.form == Setting::Form::kDuration) {
              added->transform(CLI::Validator(
                  [](std::string& text) -> std::string {
                    const auto seconds = parse_duration_seconds(text);
                    if (!seconds) return "not a duration: seconds, or a number with s, m, h or d";
                    text = std::to_string(*seconds);
                    return "";
                  },
                  "DURATION"));
            }
            if (ranged) added->check(CLI::Range(static_cast<T>(s.min), static_cast<T>(s.max)));
            return added;
          }
        },
        s.field);
    if (s.form != Setting::Form::kFlag) option->capture_default_str();
    options.push_back(option);
  }
  return options;
}

Fallible apply_server_file(const std::string& path, ServeOptions& o,
                           const std::vector<CLI::Option*>& flags) {
  std::vector<Setting> settings = serve_settings(o);
  ServeOptions from_file;
  const std::vector<Setting> file_settings = serve_settings(from_file);
  auto file = load_server_file(path, file_settings);
  if (!file) return file.error();
  for (size_t i : file->given) {
    if (flags[i]->count() == 0) copy_setting_value(file_settings[i], settings[i]);
  }
  o.config_file = path;
  return done();
}

namespace {

Fallible readable(const Setting& s, const std::string& path) {
  if (path.empty()) return done();
  std::ifstream in(path);
  if (!in) return invalid(s.name() + " (" + s.flag() + "): cannot read " + path);
  return done();
}

}  // namespace

Fallible check_serve_options(const ServeOptions& o) {
  ServeOptions copy = o;
  for (const Setting& s : serve_settings(copy)) {
    if (s.must_exist) {
      if (auto ok = readable(s, *std::get<std::string*>(s.field)); !ok) return ok;
    }
  }
  if (o.http.tls_certificate_file.empty() != o.http.tls_key_file.empty()) {
    return invalid("tls.cert (--tls-cert) and tls.key (--tls-key) go together");
  }
  if (!o.http.tls_client_ca_file.empty() && o.http.tls_certificate_file.empty()) {
    return invalid("tls.client_ca (--tls-client-ca) needs HTTPS (tls.cert and tls.key)");
  }
  if (!o.http.tls_client_crl_file.empty() && o.http.tls_client_ca_file.empty()) {
    return invalid("tls.client_crl (--tls-client-crl) needs tls.client_ca (--tls-client-ca)");
  }
  if (!o.observability.metrics_address.empty()) {
    if (auto address = metrics_listen_address(o.observability.metrics_address); !address) {
      return address.error();
    }
  }
  if (!o.observability.token_file.empty()) {
    if (auto token = auth::read_token_file(o.observability.token_file); !token)
      return token.error();
  }
  if (!o.no_auth) {
    if (auto directory = auth_directory(o); !directory) return directory.error();
  }
  return done();
}

Outcome<std::vector<MetricConfig>> configured_metrics(const ServeOptions& o) {
  std::vector<MetricConfig> wanted;
  if (!o.config_file.empty()) {
    ServeOptions scratch;
    auto file = load_server_file(o.config_file, serve_settings(scratch));
    if (!file) return file.error();
    wanted = file->metrics;
  }
  if (!o.metrics_file.empty()) {
    auto from_file = load_metrics_file(o.metrics_file);
    if (!from_file) return from_file.error();
    wanted.insert(wanted.end(), from_file->begin(), from_file->end());
  }
  for (const std::string& spec : o.metric_specs) {
    auto metric = parse_metric_spec(spec);
    if (!metric) return metric.error();
    wanted.push_back(metric.value());
  }
  // An id given twice must be given alike (the store would refuse the second).
  for (size_t i = 0; i < wanted.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (wanted[j].id == wanted[i].id && wanted[j] != wanted[i]) {
        return invalid("metric " + std::to_string(wanted[i].id) +
                       " is configured twice, differently (" +
                       first_difference(wanted[j], wanted[i]) +
                       "): in the server file, the metrics file or --metric");
      }
    }
  }
  return wanted;
}

Outcome<std::string> auth_directory(const ServeOptions& o) {
  if (!o.auth_dir.empty()) return o.auth_dir;
  if (o.db.rfind("postgres", 0) == 0) {
    return invalid(
        "--auth-dir (auth.directory) is required with PostgreSQL: every collector of the "
        "database must use the same credentials (or --no-auth for a local experiment)");
  }
  const std::string path = o.db.rfind("sqlite:", 0) == 0 ? o.db.substr(7) : o.db;
  return path + ".auth";
}

}  // namespace blur::collector
