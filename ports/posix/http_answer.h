// ports/posix: the collector's HTTP answer as the HTTPS transport reads it
// (the first bytes of it, up to the transport's buffer): the status line,
// the header lines, and the body after the blank line. Untrusted bytes,
// so the parse is strict where it matters (RFC 9112):
//
//   status-line = "HTTP/1." DIGIT SP 3DIGIT [SP reason-phrase] CRLF
//                 (status 100..599; reason: HTAB, SP, VCHAR, obs-text)
//   field-line  = token ":" *(HTAB / SP / VCHAR / obs-text) CRLF
//                 (no obs-fold: a line starting with SP or HTAB is refused)
//
// then CRLF and the body. An answer cut off by the buffer keeps its status
// (the lines that arrived whole must be valid), and has no body.
//
// No heap, no exceptions: spans point into the caller's bytes.
#ifndef BLUR_PORTS_POSIX_HTTP_ANSWER_H
#define BLUR_PORTS_POSIX_HTTP_ANSWER_H

#include <stddef.h>

#include "blur/result.h"
#include "blur/status.h"

namespace blur {
namespace posix {

// Bytes inside the answer (not NUL-terminated).
struct TextSpan {
  const char* data;
  size_t length;
};

struct HttpAnswer {
  int status;            // 100..599
  TextSpan status_line;  // "HTTP/1.1 200 OK", without its CRLF
  bool head_complete;    // the blank line after the headers arrived
  TextSpan body;         // after the blank line; empty unless head_complete
};

// kInvalidArgument for bytes that do not start with a status line ending in
// CRLF, or whose header lines (those that arrived whole) are malformed.
Result<HttpAnswer> parse_http_answer(const char* bytes, size_t length);

// The device token of an enrollment answer's body, {"token":"bt1-...", ...}:
// the first string after the first "token" key, made of [0-9a-z-] only (it
// goes into the Authorization header of every later request). Written to
// `token` NUL-terminated; kInvalidArgument, and `token` untouched, when
// there is none, it holds any other byte, or it does not fit in capacity.
Status parse_enrollment_token(TextSpan body, char* token, size_t capacity);

// The status line for a message: at most capacity - 1 bytes, each byte
// outside printable ASCII written as '?', NUL-terminated.
void printable_status_line(const HttpAnswer& answer, char* out, size_t capacity);

}  // namespace posix
}  // namespace blur

#endif  // BLUR_PORTS_POSIX_HTTP_ANSWER_H
