#include "config/server_file.h"

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "config/metric_tables.h"
#include "config/metrics_file.h"

namespace blur::collector {

namespace {

using Value = std::variant<bool, int64_t, double, std::string>;

std::string where(const std::string& name, const toml::source_region& source) {
  return name + ":" + std::to_string(source.begin.line) + ":" + std::to_string(source.begin.column);
}

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

// The absolute directory, with a final '/', that relative paths in the file
// `name` are relative to: printed back, the paths mean the same anywhere.
std::string directory_of(const std::string& name) {
  const size_t slash = name.rfind('/');
  std::string directory = slash == std::string::npos ? std::string() : name.substr(0, slash + 1);
  if (directory.empty() || directory[0] != '/') {
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) != nullptr) directory = std::string(cwd) + "/" + directory;
  }
  return directory;
}

// What the setting's field type takes, for messages.
std::string expected(const Setting& s) {
  if (s.form == Setting::Form::kDuration) {
    return "a duration (seconds, or text like \"90s\", \"15m\", \"72h\", \"3d\") in " +
           number_text(s.min) + ".." + number_text(s.max) + " seconds";
  }
  return std::visit(
      [&](auto* field) -> std::string {
        using T = std::remove_pointer_t<decltype(field)>;
        if constexpr (std::is_same_v<T, bool>) {
          return "true or false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return s.form == Setting::Form::kPath ? "a path (text)" : "text";
        } else if constexpr (std::is_same_v<T, double>) {
          return "a number in " + number_text(s.min) + ".." + number_text(s.max);
        } else {
          const double low = std::max(s.min, static_cast<double>(std::numeric_limits<T>::min()));
          const double high = std::min(s.max, static_cast<double>(std::numeric_limits<T>::max()));
          return "an integer in " + number_text(low) + ".." + number_text(high);
        }
      },
      s.field);
}

// The node's value as the setting takes it, or nothing.
std::optional<Value> read_value(const toml::node& node, const Setting& s,
                                const std::string& directory) {
  if (s.form == Setting::Form::kDuration) {
    std::optional<int64_t> seconds = node.value_exact<int64_t>();
    if (!seconds) {
      if (const auto text = node.value_exact<std::string>())
        seconds = parse_duration_seconds(*text);
    }
    if (!seconds || *seconds < s.min || *seconds > s.max) return std::nullopt;
    return Value(*seconds);
  }
  return std::visit(
      [&](auto* field) -> std::optional<Value> {
        using T = std::remove_pointer_t<decltype(field)>;
        if constexpr (std::is_same_v<T, bool>) {
          if (const auto v = node.value_exact<bool>()) return Value(*v);
          return std::nullopt;
        } else if constexpr (std::is_same_v<T, std::string>) {
          auto text = node.value_exact<std::string>();
          if (!text || text->find('\0') != std::string::npos) return std::nullopt;
          if (s.form == Setting::Form::kPath && !text->empty() && (*text)[0] != '/') {
            *text = directory + *text;
          }
          return Value(*text);
        } else if constexpr (std::is_same_v<T, double>) {
          // An integer is a number too (port = 8080, ready_timeout = 2).
          std::optional<double> v = node.value_exact<double>();
          if (!v) {
            if (const auto i = node.value_exact<int64_t>()) v = static_cast<double>(*i);
          }
          if (!v || !std::isfinite(*v) || *v < s.min || *v > s.max) return std::nullopt;
          return Value(*v);
        } else {
          // value_exact: toml++'s value<int64_t>() would convert a float.
          const auto v = node.value_exact<int64_t>();
          if (!v) return std::nullopt;
          if (*v < s.min || *v > s.max) return std::nullopt;
          if (std::is_unsigned_v<T> && *v < 0) return std::nullopt;
          if (static_cast<uint64_t>(*v) > static_cast<uint64_t>(std::numeric_limits<T>::max()) &&
              *v > 0) {
            return std::nullopt;
          }
          if (std::is_signed_v<T> && *v < static_cast<int64_t>(std::numeric_limits<T>::min())) {
            return std::nullopt;
          }
          return Value(*v);
        }
      },
      s.field);
}

void assign(const Setting& s, const Value& value) {
  std::visit(
      [&](auto* field) {
        using T = std::remove_pointer_t<decltype(field)>;
        if constexpr (std::is_same_v<T, bool>) {
          *field = std::get<bool>(value);
        } else if constexpr (std::is_same_v<T, std::string>) {
          *field = std::get<std::string>(value);
        } else if constexpr (std::is_same_v<T, double>) {
          *field = std::get<double>(value);
        } else {
          *field = static_cast<T>(std::get<int64_t>(value));
        }
      },
      s.field);
}

}  // namespace

Outcome<ServerFile> parse_server_toml(const std::string& text, const std::string& name,
                                      const std::vector<Setting>& settings) {
  auto parsed = parse_toml_text(text, name);
  if (!parsed) return parsed.error();
  const toml::table& root = parsed.value();
  // (table, key) -> setting; and the tables there are.
  std::map<std::pair<std::string, std::string>, size_t> index;
  std::map<std::string, std::string> tables;  // name -> its keys, for messages
  for (size_t i = 0; i < settings.size(); ++i) {
    index[{settings[i].table, settings[i].key}] = i;
    if (!settings[i].table.empty()) {
      std::string& keys = tables[settings[i].table];
      keys += (keys.empty() ? "" : ", ") + settings[i].key;
    }
  }
  const std::string directory = directory_of(name);
  ServerFile file;
  std::vector<std::pair<size_t, Value>> values;
  auto take = [&](const std::string& table, const toml::key& key,
                  const toml::node& node) -> Fallible {
    const size_t i = index.at({table, std::string(key.str())});
    const auto value = read_value(node, settings[i], directory);
    if (!value) {
      return invalid(where(name, node.source()) + ": " + settings[i].name() + " must be " +
                     expected(settings[i]));
    }
    values.emplace_back(i, *value);
    return done();
  };
  std::string top_level_keys;
  for (const Setting& s : settings) {
    if (s.table.empty()) top_level_keys += ", " + s.key;
  }
  for (const auto& [key, node] : root) {
    const std::string k(key.str());
    if (k == "metric") {
      auto metrics = parse_metric_tables(&node, name);
      if (!metrics) return metrics.error();
      file.metrics = std::move(metrics).value();
    } else if (index.count({"", k})) {
      if (auto taken = take("", key, node); !taken) return taken.error();
    } else if (const auto table = tables.find(k); table != tables.end()) {
      const toml::table* entries = node.as_table();
      if (!entries) return invalid(where(name, node.source()) + ": " + k + " must be a [table]");
      for (const auto& [entry_key, entry] : *entries) {
        if (!index.count({k, std::string(entry_key.str())})) {
          return invalid(where(name, entry_key.source()) + ": unknown key '" +
                         std::string(entry_key.str()) + "' in [" + k + "] (it takes " +
                         table->second + ")");
        }
        if (auto taken = take(k, entry_key, entry); !taken) return taken.error();
      }
    } else {
      std::string known;
      for (const auto& [t, keys] : tables) known += "[" + t + "], ";
      return invalid(where(name, key.source()) + ": unknown top-level key '" + k +
                     "' (the file takes " + known + "[[metric]]" + top_level_keys + ")");
    }
  }
  for (const auto& [i, value] : values) {
    assign(settings[i], value);
    file.given.push_back(i);
  }
  return file;
}

Outcome<ServerFile> load_server_file(const std::string& path,
                                     const std::vector<Setting>& settings) {
  std::ifstream in(path);
  if (!in) return invalid("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_server_toml(text.str(), path, settings);
}

std::string server_toml(const std::vector<Setting>& settings,
                        const std::vector<MetricConfig>& metrics) {
  toml::table root;
  for (const Setting& s : settings) {
    toml::table* table = &root;
    if (!s.table.empty()) {
      if (!root.contains(s.table)) root.insert(s.table, toml::table());
      table = root[s.table].as_table();
    }
    std::visit(
        [&](auto* field) {
          using T = std::remove_pointer_t<decltype(field)>;
          if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string> ||
                        std::is_same_v<T, double>) {
            table->insert_or_assign(s.key, *field);
          } else {
            table->insert_or_assign(s.key, static_cast<int64_t>(*field));
          }
        },
        s.field);
  }
  std::ostringstream out;
  out << root << "\n";
  if (!metrics.empty()) out << "\n" << metrics_toml(metrics);
  return out.str();
}

}  // namespace blur::collector
