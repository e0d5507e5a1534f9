// Inside config/ only (it brings in toml++, a private dependency): the
// [[metric]] tables of a parsed TOML document, shared by the metrics file
// (metrics_file.h) and the server file (server_file.h), which holds them
// as a section of its own.
#ifndef BLUR_COLLECTOR_CONFIG_METRIC_TABLES_H
#define BLUR_COLLECTOR_CONFIG_METRIC_TABLES_H

#include <string>
#include <toml++/toml.h>
#include <vector>

#include "model/metric_config.h"
#include "util/outcome.h"

namespace blur::collector {

// TOML text as a table; a syntax error is kInvalid "NAME: what at line:column".
Outcome<toml::table> parse_toml_text(const std::string& text, const std::string& name);

// `list_node` (the document's "metric" key, null if absent) as metrics:
// a non-empty array of valid tables with unique ids; kInvalid naming `name`.
Outcome<std::vector<MetricConfig>> parse_metric_tables(const toml::node* list_node,
                                                       const std::string& name);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_CONFIG_METRIC_TABLES_H
