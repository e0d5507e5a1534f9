// The collector's answer as the device's HTTPS transport reads it
// (ports/posix/http_answer.h): the status line, header lines and body, and
// the device token of an enrollment answer. tests/fuzz/http_answer_fuzz.cpp
// checks the same rules on arbitrary bytes.
#include "http_answer.h"

#include <gtest/gtest.h>
#include <string.h>

#include <string>

namespace {

using blur::Status;
using blur::posix::HttpAnswer;
using blur::posix::parse_enrollment_token;
using blur::posix::parse_http_answer;
using blur::posix::printable_status_line;
using blur::posix::TextSpan;

blur::Result<HttpAnswer> parse(const std::string& text) {
  return parse_http_answer(text.data(), text.size());
}

std::string text(TextSpan span) { return std::string(span.data, span.length); }

TEST(HttpAnswer, ReadsStatusLineHeadersAndBody) {
  const std::string answer =
      "HTTP/1.1 200 OK\r\nServer: Boost.Beast/351\r\nContent-Type: application/json\r\n"
      "Content-Length: 15\r\n\r\n{\"token\":\"bt1\"}";
  const auto parsed = parse(answer);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed.value().status, 200);
  EXPECT_EQ(text(parsed.value().status_line), "HTTP/1.1 200 OK");
  EXPECT_TRUE(parsed.value().head_complete);
  EXPECT_EQ(text(parsed.value().body), "{\"token\":\"bt1\"}");
}

TEST(HttpAnswer, TakesEveryStatusWithOrWithoutAReason) {
  for (const char* line : {"HTTP/1.1 204", "HTTP/1.0 100 ", "HTTP/1.1 599 Whatever\tit is \x80"}) {
    const std::string answer = std::string(line) + "\r\n\r\n";
    const auto parsed = parse(answer);
    ASSERT_TRUE(parsed.ok()) << line;
    EXPECT_EQ(text(parsed.value().status_line), line);
    EXPECT_EQ(parsed.value().body.length, 0u);
  }
  EXPECT_EQ(parse("HTTP/1.1 401 Unauthorized\r\n\r\n").value().status, 401);
}

// The old sscanf("HTTP/1.%*d %d") took all of these: a sign, extra blanks,
// a status of any width (UB past INT_MAX), and a line the buffer cut off.
TEST(HttpAnswer, RefusesWhatIsNotAStatusLine) {
  for (const char* answer :
       {"", "HTTP/1.1 200 OK", "HTTP/1.1 200 OK\n\n", "HTTP/1.1 -200 OK\r\n\r\n",
        "HTTP/1.1  200 OK\r\n\r\n", "HTTP/1.1 +200 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n",
        "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 99999999999 OK\r\n\r\n", "HTTP/1.1 099 x\r\n\r\n",
        "HTTP/1.1 600 x\r\n\r\n", "HTTP/1.12 200 OK\r\n\r\n", "HTTP/2 200\r\n\r\n",
        "http/1.1 200 OK\r\n\r\n", " HTTP/1.1 200 OK\r\n\r\n", "HTTP/1.1 200\tOK\r\n\r\n",
        "HTTP/1.1 200 O\x01K\r\n\r\n", "HTTP/1.1 200 O\rK\r\n\r\n"}) {
    EXPECT_EQ(parse(answer).status(), Status::kInvalidArgument) << answer;
  }
}

TEST(HttpAnswer, RefusesMalformedHeaderLines) {
  for (const char* header : {"Bad Name: x", "No-Colon", ": no name", " Folded: x", "\tX: y",
                             "X: a\x01", "X: a\rb", "X\x80: y", "(X): y"}) {
    EXPECT_EQ(parse(std::string("HTTP/1.1 200 OK\r\n") + header + "\r\n\r\nbody").status(),
              Status::kInvalidArgument)
        << header;
  }
  const auto empty_value = parse("HTTP/1.1 200 OK\r\nX-Empty:\r\nX-Odd~Name!: \x80\t\r\n\r\n");
  ASSERT_TRUE(empty_value.ok());
  EXPECT_TRUE(empty_value.value().head_complete);
}

TEST(HttpAnswer, AnAnswerCutOffByTheBufferKeepsItsStatusButHasNoBody) {
  const auto cut = parse("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nX-Half: \x01");
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut.value().status, 503);
  EXPECT_FALSE(cut.value().head_complete);
  EXPECT_EQ(cut.value().body.length, 0u);
  // Lines that arrived whole are checked all the same.
  EXPECT_FALSE(parse("HTTP/1.1 503 x\r\nBad Name: 1\r\nRetry-After: 5").ok());
}

TEST(HttpAnswer, StatusLineForMessagesIsPrintable) {
  const std::string answer = "HTTP/1.1 403 For\x80\xff\tbidden\r\n\r\n";
  const auto parsed = parse(answer);
  ASSERT_TRUE(parsed.ok());
  char message[64];
  printable_status_line(parsed.value(), message, sizeof message);
  EXPECT_STREQ(message, "HTTP/1.1 403 For???bidden");
  char short_message[9];
  printable_status_line(parsed.value(), short_message, sizeof short_message);
  EXPECT_STREQ(short_message, "HTTP/1.1");
}

Status token_of(const std::string& body, char* token, size_t capacity) {
  return parse_enrollment_token(TextSpan{body.data(), body.size()}, token, capacity);
}

TEST(EnrollmentToken, TakesTheFirstStringAfterTheTokenKey) {
  char token[96];
  ASSERT_EQ(token_of("{\"device_nonce\":\"0a\",\"token\": \"bt1-00000001-0a\",\"x\":\"y\"}", token,
                     sizeof token),
            Status::kOk);
  EXPECT_STREQ(token, "bt1-00000001-0a");
  ASSERT_EQ(token_of("{\"token\":\"abc\"}", token, 4), Status::kOk);  // 3 + NUL fit
  EXPECT_STREQ(token, "abc");
}

// A token goes into the Authorization header of every later request: a
// quote, CR or LF from the server would have ended up there (header
// injection); the old parser took any byte between the quotes.
TEST(EnrollmentToken, RefusesAnyByteATokenDoesNotHoldAndLeavesTheBufferAlone) {
  for (const char* body :
       {"{\"token\":\"bt1\r\nX-Injected: 1\"}", "{\"token\":\"BT1\"}", "{\"token\":\"bt 1\"}",
        "{\"token\":\"bt1\\u0041\"}", "{\"token\":\"\"}", "{\"token\":\"bt1", "{\"token\":",
        "{\"tok\":\"bt1\"}", "", "{\"token\":\"abcde\"}"}) {
    char token[5];
    memset(token, '*', sizeof token);
    EXPECT_EQ(token_of(body, token, sizeof token), Status::kInvalidArgument) << body;
    EXPECT_EQ(std::string(token, sizeof token), "*****") << body;
  }
}

}  // namespace
