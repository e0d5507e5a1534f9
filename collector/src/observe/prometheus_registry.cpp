#include "observe/prometheus_registry.h"

#include <cstdio>
#include <cstdlib>

#include "observe/exposition_text.h"

namespace blur::collector::observe {

namespace {

[[noreturn]] void registration_bug(const std::string& name, const char* problem) {
  std::fprintf(stderr, "blur-collector: bug: metric %s: %s\n", name.c_str(), problem);
  std::abort();
}

const char* type_name(int type) {
  static const char* const kTypeNames[] = {"counter", "gauge", "histogram"};
  return kTypeNames[type];
}

// {a="x",b="y"} with `extra` (a rendered le="...") last; "" without labels.
std::string label_text(const Labels& labels, const std::string& extra = "") {
  if (labels.empty() && extra.empty()) return "";
  std::string out = "{";
  for (const auto& [name, value] : labels) {
    if (out.size() > 1) out += ',';
    out += name + "=\"" + escape_label_value(value) + '"';
  }
  if (!extra.empty()) out += (out.size() > 1 ? "," : "") + extra;
  return out + "}";
}

}  // namespace

Registry::Series& Registry::series(const std::string& name, const std::string& help, Type type,
                                   const Labels& labels, bool* added) {
  if (!valid_metric_name(name)) registration_bug(name, "invalid metric name");
  for (const auto& [label, value] : labels) {
    if (!valid_label_name(label)) registration_bug(name, "invalid label name");
    if (type == Type::kHistogram && label == "le") registration_bug(name, "'le' on a histogram");
  }
  Family* family = nullptr;
  for (auto& f : families_) {
    if (f->name == name) family = f.get();
  }
  if (family == nullptr) {
    families_.push_back(std::make_unique<Family>(Family{name, help, type, {}}));
    family = families_.back().get();
  }
  if (family->type != type) registration_bug(name, "registered with two types");
  if (family->help != help) registration_bug(name, "registered with two help texts");
  for (Series& s : family->series) {
    if (s.labels == labels) {
      *added = false;
      return s;
    }
  }
  family->series.push_back(Series{labels, nullptr, nullptr, nullptr, nullptr});
  *added = true;
  return family->series.back();
}

Counter& Registry::counter(const std::string& name, const std::string& help, const Labels& labels) {
  std::lock_guard<std::mutex> lock(mutex_);
  bool added = false;
  Series& s = series(name, help, Type::kCounter, labels, &added);
  if (added) s.counter = std::make_unique<Counter>();
  return *s.counter;
}

Gauge& Registry::gauge(const std::string& name, const std::string& help, const Labels& labels) {
  std::lock_guard<std::mutex> lock(mutex_);
  bool added = false;
  Series& s = series(name, help, Type::kGauge, labels, &added);
  if (added) s.gauge = std::make_unique<Gauge>();
  if (!s.gauge) registration_bug(name, "a label set registered as a gauge and a function");
  return *s.gauge;
}

void Registry::gauge_function(const std::string& name, const std::string& help,
                              const Labels& labels, std::function<double()> read) {
  std::lock_guard<std::mutex> lock(mutex_);
  bool added = false;
  Series& s = series(name, help, Type::kGauge, labels, &added);
  if (!added) registration_bug(name, "a gauge function's label set registered twice");
  s.read = std::move(read);
}

void Registry::counter_function(const std::string& name, const std::string& help,
                                const Labels& labels, std::function<double()> read) {
  std::lock_guard<std::mutex> lock(mutex_);
  bool added = false;
  Series& s = series(name, help, Type::kCounter, labels, &added);
  if (!added) registration_bug(name, "a counter function's label set registered twice");
  s.read = std::move(read);
}

Histogram& Registry::histogram(const std::string& name, const std::string& help,
                               const std::vector<double>& upper_bounds, const Labels& labels) {
  std::lock_guard<std::mutex> lock(mutex_);
  bool added = false;
  Series& s = series(name, help, Type::kHistogram, labels, &added);
  if (added) s.histogram = std::make_unique<Histogram>(upper_bounds);
  return *s.histogram;
}

std::string Registry::render() const {
  std::string out;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& family : families_) render_family(*family, &out);
  return out;
}

void Registry::render_family(const Family& family, std::string* out) {
  const std::string& name = family.name;
  *out += "# HELP " + name + " " + escape_help(family.help) + "\n";
  *out += "# TYPE " + name + " " + type_name(static_cast<int>(family.type)) + "\n";
  for (const Series& s : family.series) {
    if (s.counter) {
      *out += name + label_text(s.labels) + " " + std::to_string(s.counter->value()) + "\n";
    } else if (s.gauge) {
      *out += name + label_text(s.labels) + " " + std::to_string(s.gauge->value()) + "\n";
    } else if (s.read) {
      *out += name + label_text(s.labels) + " " + format_number(s.read()) + "\n";
    } else if (s.histogram) {
      const Histogram::Snapshot h = s.histogram->snapshot();
      for (size_t i = 0; i < h.cumulative.size(); ++i) {
        const std::string le =
            i < h.upper_bounds.size() ? format_number(h.upper_bounds[i]) : "+Inf";
        *out += name + "_bucket" + label_text(s.labels, "le=\"" + le + "\"") + " " +
                std::to_string(h.cumulative[i]) + "\n";
      }
      *out += name + "_sum" + label_text(s.labels) + " " + format_number(h.sum) + "\n";
      *out += name + "_count" + label_text(s.labels) + " " + std::to_string(h.count) + "\n";
    }
  }
}

}  // namespace blur::collector::observe
