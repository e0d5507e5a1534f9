// A program's knob, once: its key in the server's TOML file (a key of a
// table, or of the top level), its command-line flag, its help, its range
// and the field it sets. The server file's reader (config/server_file.h)
// and the command line (cli/serve_settings.h) both work from one list of
// these, so a new knob is one line of that list.
#ifndef BLUR_COLLECTOR_CONFIG_SETTING_H
#define BLUR_COLLECTOR_CONFIG_SETTING_H

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <variant>

namespace blur::collector {

// The field a setting sets (size_t is uint64_t here).
using SettingField =
    std::variant<bool*, int*, int64_t*, uint32_t*, uint64_t*, double*, std::string*>;

struct Setting {
  enum class Form {
    kPlain,     // the field's own type: true/false, an integer, a number or text
    kFlag,      // a bool that is a bare flag on the command line (--no-auth)
    kPath,      // text naming a file; in the file, relative to the file's directory
    kDuration,  // int64 seconds: an integer, or text "90s", "15m", "72h", "3d"
  };
  std::string table;  // "" for a top-level key
  std::string key;
  std::string flags;  // CLI11 names: "--reload-seconds,--credentials-reload-seconds"
  std::string help;
  SettingField field;
  Form form = Form::kPlain;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool must_exist = false;  // kPath: a file that must be readable when set

  // "table.key" (or "key"), as messages name it.
  std::string name() const { return table.empty() ? key : table + "." + key; }
  // The first of its flags ("--reload-seconds").
  std::string flag() const { return flags.substr(0, flags.find(',')); }

  // One-line builders for a table of settings.
  Setting& range(double low, double high) {
    min = low;
    max = high;
    return *this;
  }
  Setting& as(Form f) {
    form = f;
    return *this;
  }
  Setting& existing_file() {
    form = Form::kPath;
    must_exist = true;
    return *this;
  }
};

// "90" (seconds), "90s", "15m", "72h" or "3d" as seconds; nothing for any
// other text or past a century.
std::optional<int64_t> parse_duration_seconds(const std::string& text);

// Copies `from`'s field's value into `to`'s (the same setting of another
// options object: the same field type).
void copy_setting_value(const Setting& from, const Setting& to);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_CONFIG_SETTING_H
