// The pieces of Prometheus's text exposition format (version 0.0.4) that
// need care: escaping, numbers, names.
#ifndef BLUR_COLLECTOR_OBSERVE_EXPOSITION_TEXT_H
#define BLUR_COLLECTOR_OBSERVE_EXPOSITION_TEXT_H

#include <string>
#include <string_view>

namespace blur::collector::observe {

// The Content-Type of a scrape's answer.
inline constexpr const char* kExpositionContentType = "text/plain; version=0.0.4; charset=utf-8";

// A label value between its quotes: '\\', '"' and a newline escaped.
std::string escape_label_value(std::string_view text);
// A HELP line's text: '\\' and a newline escaped.
std::string escape_help(std::string_view text);
// A sample value or bound: shortest round-trip decimal, "+Inf", "-Inf", "NaN".
std::string format_number(double value);

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool valid_metric_name(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved)
bool valid_label_name(std::string_view name);

}  // namespace blur::collector::observe

#endif  // BLUR_COLLECTOR_OBSERVE_EXPOSITION_TEXT_H
