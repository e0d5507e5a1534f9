// Content negotiation (RFC 9110, section 12.5.1): which of the media types
// a route can answer in an Accept header asks for. The header is untrusted
// bytes: anything unparseable in one of its entries makes that entry
// ignored, never an error of its own.
#ifndef BLUR_COLLECTOR_SERVER_ACCEPT_HEADER_H
#define BLUR_COLLECTOR_SERVER_ACCEPT_HEADER_H

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace blur::collector::http {

// The index in `offered` (lower-case "type/subtype", the route's default
// first) of the type `accept` prefers: the highest q of an entry naming it
// exactly, else of "type/*", else of "*/*"; ties go to the earlier offered
// type. An empty or absent header takes the default (index 0). nullopt: the
// header accepts none of them (q=0 or other types only): answer 406.
std::optional<std::size_t> choose_media_type(std::string_view accept,
                                             const std::vector<std::string>& offered);

}  // namespace blur::collector::http

#endif  // BLUR_COLLECTOR_SERVER_ACCEPT_HEADER_H
