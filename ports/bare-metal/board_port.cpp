#include "board_port.h"

#include "semihosting.h"

namespace blur {
namespace bare_metal {

namespace {

Status board_entropy(void* context, uint8_t* out, size_t length) {
  BoardContext* board = static_cast<BoardContext*>(context);
  if (board->entropy_handle < 0) {
    static const char kPath[] = "/dev/urandom";
    const uint32_t open_args[3] = {reinterpret_cast<uint32_t>(kPath), 1 /* "rb" */,
                                   sizeof kPath - 1};
    board->entropy_handle = semihosting_call(SemihostingOp::kOpen, open_args);
    if (board->entropy_handle < 0) return Status::kEntropyFailure;
  }
  while (length > 0) {
    const uint32_t read_args[3] = {static_cast<uint32_t>(board->entropy_handle),
                                   reinterpret_cast<uint32_t>(out), static_cast<uint32_t>(length)};
    // SYS_READ returns the number of bytes *not* read.
    const int32_t missing = semihosting_call(SemihostingOp::kRead, read_args);
    if (missing < 0 || static_cast<size_t>(missing) >= length) return Status::kEntropyFailure;
    const size_t got = length - static_cast<size_t>(missing);
    out += got;
    length -= got;
  }
  return Status::kOk;
}

Status board_read(void* context, uint32_t block, uint32_t offset, uint8_t* out, uint32_t size) {
  return static_cast<const BoardContext*>(context)->flash.read(block, offset, out, size);
}

Status board_prog(void* context, uint32_t block, uint32_t offset, const uint8_t* data,
                  uint32_t size) {
  return static_cast<BoardContext*>(context)->flash.prog(block, offset, data, size);
}

Status board_erase(void* context, uint32_t block) {
  return static_cast<BoardContext*>(context)->flash.erase(block);
}

size_t path_length(const char* path) {
  size_t n = 0;
  while (path[n] != '\0') ++n;
  return n;
}

// Opens the host file; mode 1 = "rb", 5 = "wb" (Arm semihosting SYS_OPEN).
int32_t open_host_file(const char* path, uint32_t mode) {
  const uint32_t args[3] = {reinterpret_cast<uint32_t>(path), mode,
                            static_cast<uint32_t>(path_length(path))};
  return semihosting_call(SemihostingOp::kOpen, args);
}

void close_host_file(int32_t handle) {
  const uint32_t args[1] = {static_cast<uint32_t>(handle)};
  semihosting_call(SemihostingOp::kClose, args);
}

// RAM is "durable" until reset; the persistent variant writes the image out.
Status board_sync(void* context) {
  const BoardContext* board = static_cast<const BoardContext*>(context);
  if (!board->flash.configured() || !board->flash.powered()) return Status::kStorageFailure;
  if (board->storage_path == nullptr) return Status::kOk;
  const int32_t handle = open_host_file(board->storage_path, 5);
  if (handle < 0) return Status::kStorageFailure;
  const flash::Config& config = board->flash.config();
  const uint32_t size = config.block_size * config.block_count;
  const uint32_t args[3] = {static_cast<uint32_t>(handle),
                            reinterpret_cast<uint32_t>(board->flash.bytes()), size};
  const int32_t missing = semihosting_call(SemihostingOp::kWrite, args);  // bytes not written
  close_host_file(handle);
  return missing == 0 ? Status::kOk : Status::kStorageFailure;
}

// The host's clock through semihosting (a real board reads its RTC).
Status board_now(void*, uint64_t* seconds) {
  const int32_t t = semihosting_call(SemihostingOp::kTime, nullptr);
  if (t < 0) return Status::kClockFailure;
  *seconds = static_cast<uint64_t>(t);
  return Status::kOk;
}

flash::Config nor_config(uint32_t block_size, uint32_t block_count, uint32_t prog_size,
                         uint8_t erase_value) {
  flash::Config config;
  config.block_size = block_size;
  config.block_count = block_count;
  config.prog_size = prog_size;
  config.erase_value = erase_value;
  config.refuse_second_program = false;
  return config;
}

}  // namespace

Port board_port(BoardContext* context, uint8_t* flash, const flash::Config& config,
                uint32_t* erase_counts) {
  context->entropy_handle = -1;
  context->storage_path = nullptr;
  if (context->flash.init(config, flash, erase_counts) == Status::kOk) context->flash.erase_all();
  // No monotonic counter on this board: an old flash image would restore an
  // old budget (document the risk, or wire RPMB/OTP into counter_read).
  Port port{context, &board_entropy, &board_read, &board_prog, &board_erase, &board_sync, 0,
            0,       &board_now,     nullptr,     nullptr};
  context->flash.describe(&port);
  return port;
}

Port board_port(BoardContext* context, uint8_t* flash, uint32_t block_size, uint32_t block_count,
                uint32_t prog_size, uint8_t erase_value) {
  return board_port(context, flash, nor_config(block_size, block_count, prog_size, erase_value));
}

Port board_port_persistent(BoardContext* context, uint8_t* flash, const flash::Config& config,
                           const char* path, uint32_t* erase_counts) {
  Port port = board_port(context, flash, config, erase_counts);
  if (!context->flash.configured()) return port;
  context->storage_path = path;
  const int32_t handle = open_host_file(path, 1);
  if (handle >= 0) {
    const uint32_t flen_args[1] = {static_cast<uint32_t>(handle)};
    const uint32_t size = config.block_size * config.block_count;
    if (semihosting_call(SemihostingOp::kFlen, flen_args) == static_cast<int32_t>(size)) {
      const uint32_t read_args[3] = {static_cast<uint32_t>(handle),
                                     reinterpret_cast<uint32_t>(flash), size};
      if (semihosting_call(SemihostingOp::kRead, read_args) != 0) {
        context->flash.erase_all();  // a short read: start erased, the ledger stays closed
      }
    }
    close_host_file(handle);
  }
  return port;
}

Port board_port_persistent(BoardContext* context, uint8_t* flash, uint32_t block_size,
                           uint32_t block_count, const char* path, uint32_t prog_size,
                           uint8_t erase_value) {
  return board_port_persistent(context, flash,
                               nor_config(block_size, block_count, prog_size, erase_value), path);
}

}  // namespace bare_metal
}  // namespace blur
