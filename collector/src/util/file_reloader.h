// A file whose parsed contents a process holds in memory and takes in again
// when the file changes: collectors sharing a credentials directory see each
// other's (and the operator's) changes within one interval, without a
// restart; the same for a CRL file.
//
// refresh() runs before the contents are used, on any thread: at most once
// per interval one caller looks at the file (a stat(2); reading and parsing
// only if its FileStamp changed) while the others go on at once. No thread
// of its own: a collector that serves nothing does not look.
//
// A new version that cannot be read or parsed (or that others may read,
// for credentials) is logged once, and the contents loaded before stay in
// force: the file is not trusted, the process goes on with what it had. The
// next change is tried again. Writers should replace the file atomically
// (a new file renamed over it, as save_credentials does): one rewritten in
// place can be seen half-written.
#ifndef BLUR_COLLECTOR_UTIL_FILE_RELOADER_H
#define BLUR_COLLECTOR_UTIL_FILE_RELOADER_H

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <utility>

#include "util/file_watch.h"
#include "util/outcome.h"

namespace blur::collector {

template <typename T>
class FileReloader {
 public:
  using Clock = std::chrono::steady_clock;
  // Reads and checks the file.
  using Load = std::function<Outcome<T>(const std::string& path)>;
  // Puts new contents in force; returns a few words for the log ("3 tokens").
  using Install = std::function<std::string(T contents)>;
  using Log = std::function<void(const std::string& line)>;

  // `stamp`: the version whose contents the caller holds (taken before it
  // read them, so that a change in between is seen at the first look).
  FileReloader(std::string path, std::string what, FileStamp stamp, Load load, Install install)
      : path_(std::move(path)),
        what_(std::move(what)),
        stamp_(stamp),
        load_(std::move(load)),
        install_(std::move(install)) {}

  // Looks for changes every `interval` from now on (before: never), telling
  // `log` what it took in or refused.
  void watch(Clock::duration interval, Log log) {
    std::lock_guard<std::mutex> lock(mutex_);
    interval_ = interval;
    log_ = std::move(log);
    next_look_.store((Clock::now() + interval_).time_since_epoch().count());
  }

  void refresh() {
    const auto now = Clock::now().time_since_epoch().count();
    if (now < next_look_.load(std::memory_order_relaxed)) return;
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock || now < next_look_.load(std::memory_order_relaxed)) return;  // another looks
    next_look_.store(now + interval_.count(), std::memory_order_relaxed);
    look();
  }

  // Reads the file now, changed or not (SIGHUP): the summary of what was
  // put in force, or why the file cannot be used (the contents loaded
  // before then stay in force).
  Outcome<std::string> reload() {
    std::lock_guard<std::mutex> lock(mutex_);
    const FileStamp stamp = stamp_of(path_);
    auto loaded = load_(path_);
    if (!loaded) return loaded.error();
    stamp_ = stamp;
    return install_(std::move(loaded).value());
  }

  // For a process that changes the file itself: under an exclusive lock on
  // PATH.lock (so that processes sharing the file do not lose each other's
  // changes), `write_next` gets the file's contents read afresh, writes the
  // next version and returns it; that version is in force when this returns.
  // Nothing changes if the file on disk cannot be loaded or `write_next`
  // fails.
  Fallible change(const std::function<Outcome<T>(T on_disk)>& write_next) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto file_lock = ExclusiveFileLock::acquire(path_ + ".lock");
    if (!file_lock) return file_lock.error();
    auto on_disk = load_(path_);
    if (!on_disk) {
      return unavailable("cannot change the " + what_ +
                         ": the file on disk is not usable: " + on_disk.error().message);
    }
    auto next = write_next(std::move(on_disk).value());
    if (!next) return next.error();
    stamp_ = stamp_of(path_);  // our version: no one else writes under the lock
    install_(std::move(next).value());
    return done();
  }

 private:
  void look() {
    const FileStamp stamp = stamp_of(path_);
    if (stamp == stamp_) return;
    stamp_ = stamp;  // whatever comes of it, this version is dealt with once
    if (!stamp.exists) {
      return say("keeping the " + what_ + " loaded before: " + path_ +
                 " cannot be read (missing?)");
    }
    auto loaded = load_(path_);
    if (!loaded) return say("keeping the " + what_ + " loaded before: " + loaded.error().message);
    const std::string summary = install_(std::move(loaded).value());
    say("reloaded the " + what_ + " from " + path_ + " (changed on disk): " + summary);
  }

  void say(const std::string& line) {
    if (log_) log_(one_printable_line(line));
  }

  const std::string path_, what_;
  std::mutex mutex_;  // one look or change at a time; guards the members below
  FileStamp stamp_;   // the version in force (or last refused)
  Load load_;
  Install install_;
  Log log_;
  Clock::duration interval_{};
  std::atomic<Clock::rep> next_look_{std::numeric_limits<Clock::rep>::max()};
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_UTIL_FILE_RELOADER_H
