// The operator view's parts: the registry's text exposition (parsed back by
// a small reader of the format), histograms under concurrent updates, the
// refusal reasons, the request log's lines, and the store monitor against a
// SQLite database that really is locked.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "observe/exposition_text.h"
#include "observe/process_metrics.h"
#include "observe/prometheus_registry.h"
#include "observe/refusals.h"
#include "observe/request_log.h"
#include "observe/store_monitor.h"
#include "observe/write_health.h"
#include "util/time_text.h"

namespace {

using namespace blur::collector;
using namespace blur::collector::observe;

// ---- a reader of the text format (version 0.0.4) ----------------------------

struct Sample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // unescaped
  double value = 0;
};

struct Exposition {
  std::map<std::string, std::string> help;  // unescaped
  std::map<std::string, std::string> type;
  std::vector<Sample> samples;
};

bool name_char(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

// Fails the test (and returns false) on any line that is not HELP, TYPE or a
// sample, and on a sample whose family has no TYPE before it.
bool parse(const std::string& text, Exposition* out) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      const size_t space = line.find(' ', 7);
      EXPECT_NE(space, std::string::npos) << line;
      if (space == std::string::npos) return false;
      const std::string name = line.substr(7, space - 7);
      std::string rest = line.substr(space + 1);
      if (line[2] == 'H') {
        std::string unescaped;
        for (size_t i = 0; i < rest.size(); ++i) {
          if (rest[i] == '\\' && i + 1 < rest.size()) {
            unescaped += rest[i + 1] == 'n' ? '\n' : rest[i + 1];
            ++i;
          } else {
            unescaped += rest[i];
          }
        }
        EXPECT_FALSE(out->type.count(name)) << "HELP after TYPE: " << line;
        out->help[name] = unescaped;
      } else {
        EXPECT_TRUE(rest == "counter" || rest == "gauge" || rest == "histogram") << line;
        EXPECT_FALSE(out->type.count(name)) << "TYPE twice: " << line;
        out->type[name] = rest;
      }
      continue;
    }
    Sample sample;
    size_t at = 0;
    while (at < line.size() && name_char(line[at], at == 0)) ++at;
    sample.name = line.substr(0, at);
    EXPECT_FALSE(sample.name.empty()) << line;
    if (at < line.size() && line[at] == '{') {
      ++at;
      while (at < line.size() && line[at] != '}') {
        const size_t equals = line.find("=\"", at);
        if (equals == std::string::npos) return ADD_FAILURE() << line, false;
        std::string label = line.substr(at, equals - at), value;
        at = equals + 2;
        while (at < line.size() && line[at] != '"') {
          if (line[at] == '\\') {
            ++at;
            if (at >= line.size()) return ADD_FAILURE() << line, false;
            EXPECT_TRUE(line[at] == '\\' || line[at] == '"' || line[at] == 'n') << line;
            value += line[at] == 'n' ? '\n' : line[at];
          } else {
            value += line[at];
          }
          ++at;
        }
        if (at >= line.size()) return ADD_FAILURE() << "unterminated: " << line, false;
        ++at;  // the closing quote
        sample.labels.emplace_back(label, value);
        if (at < line.size() && line[at] == ',') ++at;
      }
      if (at >= line.size()) return ADD_FAILURE() << line, false;
      ++at;  // '}'
    }
    if (at >= line.size() || line[at] != ' ') return ADD_FAILURE() << line, false;
    const std::string value = line.substr(at + 1);
    char* end = nullptr;
    sample.value = value == "+Inf" ? INFINITY : std::strtod(value.c_str(), &end);
    if (value != "+Inf" && (end == value.c_str() || *end != '\0')) {
      return ADD_FAILURE() << "bad value: " << line, false;
    }
    std::string family = sample.name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s = suffix;
      if (!out->type.count(family) && family.size() > s.size() &&
          family.compare(family.size() - s.size(), s.size(), s) == 0) {
        family = family.substr(0, family.size() - s.size());
      }
    }
    EXPECT_TRUE(out->type.count(family)) << "sample before its TYPE: " << line;
    EXPECT_TRUE(out->help.count(family)) << "sample without HELP: " << line;
    out->samples.push_back(sample);
  }
  return true;
}

std::vector<Sample> named(const Exposition& e, const std::string& name) {
  std::vector<Sample> found;
  for (const Sample& s : e.samples) {
    if (s.name == name) found.push_back(s);
  }
  return found;
}

// ---- the registry -------------------------------------------------------------

TEST(Registry, RendersParsableTextWithEscapedLabelsAndHelp) {
  Registry registry;
  const std::string odd = "a\"quoted\" back\\slash\nnew line";
  registry.counter("test_events_total", "Events, with a \\ and a\nsecond line", {{"kind", odd}})
      .add(3);
  registry.counter("test_events_total", "Events, with a \\ and a\nsecond line", {{"kind", "plain"}})
      .add();
  registry.gauge("test_level", "A level").set(-7);
  registry.gauge_function("test_read", "Read when rendered", {}, [] { return 2.5; });
  Exposition e;
  ASSERT_TRUE(parse(registry.render(), &e));
  EXPECT_EQ(e.type["test_events_total"], "counter");
  EXPECT_EQ(e.help["test_events_total"], "Events, with a \\ and a\nsecond line");
  const auto events = named(e, "test_events_total");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].labels, (Labels{{"kind", odd}}));
  EXPECT_EQ(events[0].value, 3);
  EXPECT_EQ(events[1].value, 1);
  EXPECT_EQ(named(e, "test_level").at(0).value, -7);
  EXPECT_EQ(named(e, "test_read").at(0).value, 2.5);
}

TEST(Registry, TheSameSeriesRegisteredTwiceIsOne) {
  Registry registry;
  Counter& a = registry.counter("test_total", "help", {{"x", "1"}});
  Counter& b = registry.counter("test_total", "help", {{"x", "1"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &registry.counter("test_total", "help", {{"x", "2"}}));
}

TEST(Registry, HistogramBucketsAreCumulativeAndEndWithInfEqualToCount) {
  Registry registry;
  Histogram& h = registry.histogram("test_seconds", "Durations", {0.1, 1, 10}, {{"route", "/a"}});
  for (double v : {0.05, 0.1, 0.5, 1.0, 3.0, 20.0, 1e300}) h.observe(v);
  h.observe(NAN);  // no bucket: ignored
  Exposition e;
  ASSERT_TRUE(parse(registry.render(), &e));
  EXPECT_EQ(e.type["test_seconds"], "histogram");
  const auto buckets = named(e, "test_seconds_bucket");
  ASSERT_EQ(buckets.size(), 4u);
  const std::vector<std::string> le = {"0.1", "1", "10", "+Inf"};
  const std::vector<double> cumulative = {2, 4, 5, 7};  // bounds are inclusive
  for (size_t i = 0; i < buckets.size(); ++i) {
    EXPECT_EQ(buckets[i].labels, (Labels{{"route", "/a"}, {"le", le[i]}}));
    EXPECT_EQ(buckets[i].value, cumulative[i]) << le[i];
    if (i > 0) {
      EXPECT_GE(buckets[i].value, buckets[i - 1].value);
    }
  }
  EXPECT_EQ(named(e, "test_seconds_count").at(0).value, buckets.back().value);
  EXPECT_DOUBLE_EQ(named(e, "test_seconds_sum").at(0).value,
                   0.05 + 0.1 + 0.5 + 1.0 + 3.0 + 20.0 + 1e300);
}

TEST(Histogram, CountsConcurrentObservationsExactly) {
  Histogram h({1, 2});
  constexpr int kThreads = 4, kEach = 50000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&h, t] {
      for (int i = 0; i < kEach; ++i) h.observe(t % 2 == 0 ? 1.0 : 3.0);
    });
  }
  for (auto& thread : threads) thread.join();
  const Histogram::Snapshot s = h.snapshot();
  EXPECT_EQ(s.count, uint64_t{kThreads} * kEach);
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{2 * kEach, 2 * kEach, 4 * kEach}));
  EXPECT_EQ(s.sum, 2.0 * kEach * 1.0 + 2.0 * kEach * 3.0);  // exact in a double
}

TEST(ExpositionText, NumbersAndNames) {
  EXPECT_EQ(format_number(0.005), "0.005");
  EXPECT_EQ(format_number(1000), "1000");
  EXPECT_EQ(format_number(INFINITY), "+Inf");
  EXPECT_EQ(format_number(-INFINITY), "-Inf");
  EXPECT_EQ(format_number(NAN), "NaN");
  EXPECT_TRUE(valid_metric_name("blur_collector:x_total"));
  EXPECT_FALSE(valid_metric_name("9lives"));
  EXPECT_FALSE(valid_metric_name("a-b"));
  EXPECT_TRUE(valid_label_name("route"));
  EXPECT_FALSE(valid_label_name("__reserved"));
  EXPECT_FALSE(valid_label_name("a:b"));
}

TEST(Refusals, EveryReasonIsExportedAndUnknownTokensCountAsOther) {
  Registry registry;
  Refusals refusals(registry);
  refusals.count(Reason::kUnauthenticated);
  refusals.count("too_large");
  refusals.count("too_large");
  refusals.count("no such reason");
  Exposition e;
  ASSERT_TRUE(parse(registry.render(), &e));
  std::map<std::string, double> by_reason;
  for (const Sample& s : named(e, "blur_collector_requests_refused_total")) {
    ASSERT_EQ(s.labels.size(), 1u);
    by_reason[s.labels[0].second] = s.value;
  }
  EXPECT_EQ(by_reason.size(), kReasonCount);
  for (const char* reserved : {"unauthenticated", "forbidden", "contribution_bound", "enrollment_rate",
                               "device_busy", "implausible_time", "deadline", "source_connections"}) {
    EXPECT_TRUE(by_reason.count(reserved)) << reserved;
  }
  EXPECT_EQ(by_reason["unauthenticated"], 1);
  EXPECT_EQ(by_reason["too_large"], 2);
  EXPECT_EQ(by_reason["other"], 1);
  EXPECT_EQ(by_reason["malformed"], 0);
  for (size_t i = 0; i < kReasonCount; ++i) {
    EXPECT_EQ(reason_from_name(reason_name(static_cast<Reason>(i))), static_cast<Reason>(i));
  }
}

// ---- the request log ------------------------------------------------------------

TEST(RequestLog, LinesAreJsonWithUntrustedTextEscaped) {
  RequestRecord record;
  record.unix_millis = 1795000000123;
  record.request_id = "00ff00ff00ff00ff";
  record.method = std::string_view("G\"E\nT\\\xff\x01", 8);
  record.route = "/v1/reports";
  record.status = 200;
  record.latency_ms = 1.23456;
  record.reports = 12;
  const std::string line = request_log_line(record);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // one line
  const auto parsed = nlohmann::json::parse(line);
  EXPECT_EQ(parsed["time"], "2026-11-18T11:06:40.123Z");
  EXPECT_EQ(parsed["request_id"], "00ff00ff00ff00ff");
  EXPECT_EQ(parsed["method"], "OTHER");  // not a method: none of its bytes logged
  EXPECT_EQ(parsed["route"], "/v1/reports");
  EXPECT_EQ(parsed["status"], 200);
  EXPECT_EQ(parsed["latency_ms"], 1.235);
  EXPECT_EQ(parsed["reports"], 12);
  EXPECT_FALSE(parsed.contains("refusal"));

  record.reports.reset();
  record.refusal = "malformed";
  const std::string long_method(1000, 'M');
  record.method = long_method;
  const auto refused = nlohmann::json::parse(request_log_line(record));
  EXPECT_EQ(refused["refusal"], "malformed");
  EXPECT_FALSE(refused.contains("reports"));
  EXPECT_EQ(refused["method"], "OTHER");
}

// Only known methods reach the log: a method is any token to the HTTP
// parser, so a client could put a secret or a 24-byte message there.
TEST(RequestLog, UnknownMethodsAreLoggedAsAPlaceholder) {
  RequestRecord record;
  record.request_id = "00ff00ff00ff00ff";
  record.route = "/v1/reports";
  for (const char* known : {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE",
                            "PATCH"}) {
    record.method = known;
    EXPECT_EQ(nlohmann::json::parse(request_log_line(record))["method"], known);
  }
  for (const char* token : {"eyJhbGciOiJIUzI1NiJ9", "get", "POSTX", "PROPFIND", "M"}) {
    record.method = token;
    const std::string line = request_log_line(record);
    EXPECT_EQ(nlohmann::json::parse(line)["method"], "OTHER") << token;
    if (std::string(token) != "M") {
      EXPECT_EQ(line.find(token), std::string::npos) << line;
    }
  }
  record.method = "";  // refused before a request was read (a connection cap)
  EXPECT_EQ(nlohmann::json::parse(request_log_line(record))["method"], "");
}

TEST(RequestLog, ConcurrentWritersGiveWholeLines) {
  char pattern[] = "/tmp/blur-log-test-XXXXXX";
  const std::string dir = mkdtemp(pattern);
  const std::string path = dir + "/requests.log";
  {
    auto log = RequestLog::open(path);
    ASSERT_TRUE(log) << log.error().message;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&log, t] {
        const std::string route = "/route/" + std::to_string(t);
        for (int i = 0; i < 500; ++i) {
          RequestRecord record;
          record.request_id = "0123456789abcdef";
          record.method = "POST";
          record.route = route;
          record.status = 200;
          (*log)->write(record);
        }
      });
    }
    for (auto& thread : threads) thread.join();
  }
  std::ifstream in(path);
  std::string line;
  std::map<std::string, int> per_route;
  while (std::getline(in, line)) per_route[nlohmann::json::parse(line)["route"]]++;
  EXPECT_EQ(per_route,
            (std::map<std::string, int>{
                {"/route/0", 500}, {"/route/1", 500}, {"/route/2", 500}, {"/route/3", 500}}));
  std::system(("rm -rf " + dir).c_str());
}

TEST(TimeText, MillisecondsInRfc3339) {
  EXPECT_EQ(format_time_millis(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(format_time_millis(1795000000999), "2026-11-18T11:06:40.999Z");
  EXPECT_EQ(format_time_millis(-1), "1969-12-31T23:59:59.999Z");
}

// ---- the store monitor ----------------------------------------------------------

Fallible check(StoreMonitor& monitor) {
  std::promise<Fallible> answer;
  monitor.check_ready([&answer](const Fallible& ready) { answer.set_value(ready); });
  return answer.get_future().get();
}

// The hung and stopped database cases are real-server tests:
// tests/collector/readyz_postgres_test.sh (a PostgreSQL under SIGSTOP).
TEST(StoreMonitor, ReadyWhenTheStoreAnswersSizeSampledAtStartStoppingAfterStop) {
  char pattern[] = "/tmp/blur-monitor-test-XXXXXX";
  const std::string dir = mkdtemp(pattern);
  auto store = Store::open(dir + "/blur.db", Store::Mode::kReadWrite);
  ASSERT_TRUE(store) << store.error().message;
  Gauge size;
  StoreMonitor monitor(**store, &size, {std::chrono::milliseconds(300), std::chrono::hours(1)});
  // Concurrent checks share queries; each is answered once.
  std::vector<std::future<Fallible>> answers;
  for (int i = 0; i < 8; ++i)
    answers.push_back(std::async(std::launch::async, [&monitor] { return check(monitor); }));
  for (auto& answer : answers) EXPECT_TRUE(answer.get());
  for (int i = 0; i < 100 && size.value() == 0; ++i) usleep(10000);
  EXPECT_GT(size.value(), 4096);  // sampled at start: the file and its WAL
  monitor.stop();
  const Fallible stopped = check(monitor);
  ASSERT_FALSE(stopped);
  EXPECT_NE(stopped.error().message.find("stopping"), std::string::npos);
  std::system(("rm -rf " + dir).c_str());
}

// ---- write health and process metrics ------------------------------------------

TEST(WriteHealth, OneLogLinePerStateChangeNotPerFailure) {
  std::vector<std::string> lines;
  WriteHealth health([&lines](const std::string& line) { lines.push_back(line); });
  health.record_commit(done());
  EXPECT_FALSE(health.failing());
  EXPECT_TRUE(lines.empty());
  for (int i = 0; i < 50; ++i) health.record_commit(unavailable("disk I/O error: /var/lib/blur.db"));
  EXPECT_TRUE(health.failing());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("failing"), std::string::npos);
  EXPECT_NE(lines[0].find("disk I/O error: /var/lib/blur.db"), std::string::npos);  // for the operator
  health.record_commit(done());
  health.record_commit(done());
  EXPECT_FALSE(health.failing());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("after 50 failed"), std::string::npos) << lines[1];
}

// A probe is trusted only once commits have stopped: a full disk can take
// the probe's small write while every real commit fails.
TEST(WriteHealth, AProbeIsDueOnlyAfterCommitsWentQuiet) {
  WriteHealth health(nullptr);
  const auto t0 = WriteHealth::Clock::now();
  EXPECT_FALSE(health.probe_due(t0 + std::chrono::hours(1)));  // not failing
  health.record_commit(unavailable("full"), t0);
  EXPECT_FALSE(health.probe_due(t0));
  EXPECT_FALSE(health.probe_due(t0 + WriteHealth::kProbeAfterIdle - std::chrono::milliseconds(1)));
  EXPECT_TRUE(health.probe_due(t0 + WriteHealth::kProbeAfterIdle));
  health.record_probe(done());
  EXPECT_FALSE(health.failing());
  EXPECT_FALSE(health.probe_due(t0 + std::chrono::hours(1)));
}

TEST(ProcessMetrics, StandardNamesWithLiveValues) {
  Registry registry;
  register_process_metrics(registry);
  Exposition e;
  ASSERT_TRUE(parse(registry.render(), &e));
  EXPECT_EQ(e.type["process_cpu_seconds_total"], "counter");
  for (const char* gauge : {"process_resident_memory_bytes", "process_open_fds", "process_max_fds",
                            "process_start_time_seconds", "blur_collector_build_info"}) {
    EXPECT_EQ(e.type[gauge], "gauge") << gauge;
  }
  auto value = [&e](const char* name) {
    const auto found = named(e, name);
    return found.size() == 1 ? found[0].value : -1.0;
  };
  EXPECT_GE(value("process_cpu_seconds_total"), 0);
  EXPECT_GT(value("process_resident_memory_bytes"), 1 << 20);  // a running test holds MBs
  const double fds = value("process_open_fds");
  std::ifstream a("/proc/self/stat"), b("/proc/self/stat"), c("/proc/self/stat");
  ASSERT_TRUE(parse(registry.render(), &(e = Exposition())));
  EXPECT_EQ(value("process_open_fds"), fds + 3);  // the three streams above
  EXPECT_GE(value("process_max_fds"), value("process_open_fds"));
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(value("process_start_time_seconds"), now + 1);
  EXPECT_GT(value("process_start_time_seconds"), now - 86400);  // this test started today
  const auto info = named(e, "blur_collector_build_info");
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0].value, 1);
  ASSERT_EQ(info[0].labels.size(), 1u);
  EXPECT_EQ(info[0].labels[0].first, "version");
}

}  // namespace
