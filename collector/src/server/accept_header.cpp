#include "server/accept_header.h"

#include "server/http_text.h"

namespace blur::collector::http {

namespace {


std::string_view trimmed(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

// An entry's weight in thousandths (q=0.5 -> 500); nullopt for a malformed
// q. Parameters other than q are ignored.
std::optional<int> weight(std::string_view parameters) {
  int q = 1000;
  while (!parameters.empty()) {
    const std::size_t semicolon = parameters.find(';');
    const std::string_view parameter = trimmed(parameters.substr(0, semicolon));
    parameters =
        semicolon == std::string_view::npos ? std::string_view() : parameters.substr(semicolon + 1);
    if (parameter.size() < 2 || (parameter[0] != 'q' && parameter[0] != 'Q') ||
        parameter[1] != '=') {
      continue;
    }
    // qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
    const std::string_view value = parameter.substr(2);
    if (value.empty() || value.size() > 5 || (value[0] != '0' && value[0] != '1')) {
      return std::nullopt;
    }
    int thousandths = (value[0] - '0') * 1000;
    if (value.size() > 1) {
      if (value[1] != '.') return std::nullopt;
      int scale = 100;
      for (std::size_t i = 2; i < value.size(); ++i, scale /= 10) {
        if (value[i] < '0' || value[i] > '9') return std::nullopt;
        thousandths += (value[i] - '0') * scale;
      }
    }
    if (thousandths > 1000) return std::nullopt;
    q = thousandths;
  }
  return q;
}

}  // namespace

std::optional<std::size_t> choose_media_type(std::string_view accept,
                                             const std::vector<std::string>& offered) {
  if (offered.empty()) return std::nullopt;
  if (trimmed(accept).empty()) return 0;
  // Per offered type: the weight of the most specific entry naming it
  // (specificity 2: exact, 1: type/*, 0: */*), as RFC 9110 orders them.
  std::vector<int> specificity(offered.size(), -1), q(offered.size(), 0);
  while (!accept.empty()) {
    const std::size_t comma = accept.find(',');
    const std::string_view entry = accept.substr(0, comma);
    accept = comma == std::string_view::npos ? std::string_view() : accept.substr(comma + 1);
    const std::string type = media_type(entry);  // lower case, parameters cut
    const std::size_t slash = type.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == type.size()) continue;
    const std::size_t semicolon = entry.find(';');
    const auto w = weight(semicolon == std::string_view::npos ? std::string_view()
                                                              : entry.substr(semicolon + 1));
    if (!w) continue;
    const bool any_subtype = type.compare(slash + 1, std::string::npos, "*") == 0;
    const bool any_type = type == "*/*";
    for (std::size_t i = 0; i < offered.size(); ++i) {
      int level = -1;
      if (type == offered[i]) {
        level = 2;
      } else if (any_type) {
        level = 0;
      } else if (any_subtype && offered[i].compare(0, slash + 1, type, 0, slash + 1) == 0) {
        level = 1;
      }
      if (level > specificity[i]) {
        specificity[i] = level;
        q[i] = *w;
      }
    }
  }
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < offered.size(); ++i) {
    if (specificity[i] < 0 || q[i] == 0) continue;
    if (!best || q[i] > q[*best]) best = i;
  }
  return best;
}

}  // namespace blur::collector::http
