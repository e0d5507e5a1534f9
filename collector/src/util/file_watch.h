// Noticing that a file changed on disk, and a lock for changing it when
// several processes share it (collectors sharing a credentials directory).
#ifndef BLUR_COLLECTOR_UTIL_FILE_WATCH_H
#define BLUR_COLLECTOR_UTIL_FILE_WATCH_H

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "util/outcome.h"

namespace blur::collector {

// What stat(2) says of one version of a file. A file replaced by a rename
// (as save_credentials does) has a new inode; one rewritten in place a new
// size or modification time, to the nanosecond.
struct FileStamp {
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  int64_t modified_ns = 0;
  int64_t changed_ns = 0;  // st_ctime: a chmod or a rename changes it too

  bool operator==(const FileStamp& other) const;
  bool operator!=(const FileStamp& other) const { return !(*this == other); }
};

// The file's stamp now; `exists` false if stat fails (missing, unreadable
// directory).
FileStamp stamp_of(const std::string& path);

// An exclusive flock(2) on `path` (created 0600 if missing), held until
// destroyed: a read-modify-write of a shared file under it cannot lose
// another process's change. flock works across processes on one host and,
// on Linux, on NFS (as a POSIX lock).
class ExclusiveFileLock {
 public:
  static Outcome<ExclusiveFileLock> acquire(const std::string& path);
  ExclusiveFileLock(ExclusiveFileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  ExclusiveFileLock& operator=(ExclusiveFileLock&&) = delete;
  ExclusiveFileLock(const ExclusiveFileLock&) = delete;
  ~ExclusiveFileLock();

 private:
  explicit ExclusiveFileLock(int fd) : fd_(fd) {}
  int fd_;
};

// `text` with every control byte and DEL as '?': file contents quoted in an
// error message go to the log as one line.
std::string one_printable_line(std::string text);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_UTIL_FILE_WATCH_H
