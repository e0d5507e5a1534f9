#include "board_port.h"

#include <string.h>

#include "semihosting.h"

namespace blur {
namespace cortex_m {

namespace {

bool in_range(const BoardContext& board, uint32_t block, uint32_t offset, uint32_t size) {
  return block < board.block_count && offset <= board.block_size &&
         size <= board.block_size - offset;
}

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
  const BoardContext* board = static_cast<BoardContext*>(context);
  if (!in_range(*board, block, offset, size)) return Status::kStorageFailure;
  memcpy(out, board->flash + block * board->block_size + offset, size);
  return Status::kOk;
}

Status board_prog(void* context, uint32_t block, uint32_t offset, const uint8_t* data,
                  uint32_t size) {
  BoardContext* board = static_cast<BoardContext*>(context);
  if (!in_range(*board, block, offset, size)) return Status::kStorageFailure;
  uint8_t* target = board->flash + block * board->block_size + offset;
  for (uint32_t i = 0; i < size; ++i) target[i] &= data[i];  // NOR: program clears bits
  return Status::kOk;
}

Status board_erase(void* context, uint32_t block) {
  BoardContext* board = static_cast<BoardContext*>(context);
  if (block >= board->block_count) return Status::kStorageFailure;
  memset(board->flash + block * board->block_size, 0xFF, board->block_size);
  return Status::kOk;
}

Status board_sync(void*) { return Status::kOk; }  // RAM is "durable" until reset

// The host's clock through semihosting (a real board reads its RTC).
Status board_now(void*, uint64_t* seconds) {
  const int32_t t = semihosting_call(SemihostingOp::kTime, nullptr);
  if (t < 0) return Status::kClockFailure;
  *seconds = static_cast<uint64_t>(t);
  return Status::kOk;
}

}  // namespace

Port board_port(BoardContext* context, uint8_t* flash, uint32_t block_size, uint32_t block_count) {
  *context = BoardContext{flash, block_size, block_count, -1};
  memset(flash, 0xFF, static_cast<size_t>(block_size) * block_count);
  // No monotonic counter on this board: an old flash image would restore an
  // old budget (document the risk, or wire RPMB/OTP into counter_read).
  return Port{context,    &board_entropy, &board_read, &board_prog, &board_erase, &board_sync,
              block_size, block_count,    &board_now,  nullptr,     nullptr};
}

}  // namespace cortex_m
}  // namespace blur
