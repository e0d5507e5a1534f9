#include "posix_port.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

namespace blur {
namespace posix {

namespace {

bool write_all(int fd, const uint8_t* data, size_t size, off_t offset) {
  while (size > 0) {
    const ssize_t n = pwrite(fd, data, size, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
    offset += n;
  }
  return true;
}

bool fill_erased(int fd, off_t offset, size_t size) {
  uint8_t erased[256];
  memset(erased, 0xFF, sizeof erased);
  while (size > 0) {
    const size_t chunk = size < sizeof erased ? size : sizeof erased;
    if (!write_all(fd, erased, chunk, offset)) return false;
    offset += static_cast<off_t>(chunk);
    size -= chunk;
  }
  return true;
}

// A new or grown file is durable only once its directory entry is: fsync
// the directory too (POSIX leaves this to the application).
bool sync_parent_directory(const char* path) {
  char directory[PATH_MAX] = ".";
  if (const char* slash = strrchr(path, '/')) {
    const size_t length = slash == path ? 1 : static_cast<size_t>(slash - path);
    if (length >= sizeof directory) return false;
    memcpy(directory, path, length);
    directory[length] = '\0';
  }
  const int fd = ::open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool synced = fsync(fd) == 0;
  ::close(fd);
  return synced;
}

}  // namespace

PosixPort::~PosixPort() { close(); }

void PosixPort::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status PosixPort::open(const char* path, uint32_t block_size, uint32_t block_count) {
  close();
  if (path == nullptr || block_size == 0 || block_count == 0) return Status::kInvalidArgument;
  const int fd = ::open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::kStorageFailure;
  struct stat st;
  const off_t size = static_cast<off_t>(block_size) * block_count;
  if (fstat(fd, &st) != 0) {
    ::close(fd);
    return Status::kStorageFailure;
  }
  const bool grown = st.st_size < size;
  if ((grown && !fill_erased(fd, st.st_size, static_cast<size_t>(size - st.st_size))) ||
      fsync(fd) != 0 || (grown && !sync_parent_directory(path))) {
    ::close(fd);
    return Status::kStorageFailure;
  }
  fd_ = fd;
  block_size_ = block_size;
  block_count_ = block_count;
  return Status::kOk;
}

Port PosixPort::port() {
  Port port = member_port(this);
  port.block_size = block_size_;
  port.block_count = block_count_;
  return port;  // no monotonic counter: see posix_port.h
}

Status PosixPort::now(uint64_t* seconds) {
  timespec ts{};
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0 || ts.tv_sec < 0) return Status::kClockFailure;
  *seconds = static_cast<uint64_t>(ts.tv_sec);
  return Status::kOk;
}

bool PosixPort::in_range(uint32_t block, uint32_t offset, uint32_t size) const {
  return fd_ >= 0 && block < block_count_ && offset <= block_size_ && size <= block_size_ - offset;
}

Status PosixPort::entropy(uint8_t* out, size_t length) {
  while (length > 0) {
    const ssize_t n = getrandom(out, length, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::kEntropyFailure;
    out += n;
    length -= static_cast<size_t>(n);
  }
  return Status::kOk;
}

Status PosixPort::read(uint32_t block, uint32_t offset, uint8_t* out, uint32_t size) {
  if (!in_range(block, offset, size)) return Status::kStorageFailure;
  off_t at = static_cast<off_t>(block) * block_size_ + offset;
  while (size > 0) {
    const ssize_t n = pread(fd_, out, size, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::kStorageFailure;
    out += n;
    size -= static_cast<uint32_t>(n);
    at += n;
  }
  return Status::kOk;
}

Status PosixPort::prog(uint32_t block, uint32_t offset, const uint8_t* data, uint32_t size) {
  if (!in_range(block, offset, size)) return Status::kStorageFailure;
  const off_t at = static_cast<off_t>(block) * block_size_ + offset;
  return write_all(fd_, data, size, at) ? Status::kOk : Status::kStorageFailure;
}

Status PosixPort::erase(uint32_t block) {
  if (!in_range(block, 0, block_size_)) return Status::kStorageFailure;
  const off_t at = static_cast<off_t>(block) * block_size_;
  return fill_erased(fd_, at, block_size_) ? Status::kOk : Status::kStorageFailure;
}

Status PosixPort::sync() {
  return fd_ >= 0 && fsync(fd_) == 0 ? Status::kOk : Status::kStorageFailure;
}

}  // namespace posix
}  // namespace blur
