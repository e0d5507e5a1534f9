// AES-256 in counter mode, addressed by block: block i of the keystream is
// AES-256_K(prefix || i), with the 8-byte prefix followed by i as 8 bytes
// big-endian (a NIST SP 800-38A counter block whose low 64 bits count).
// Any block can be computed without the ones before it, so threads can
// split a long keystream and still produce exactly the same bytes.
//
// Two implementations, byte-identical (tests/trainer/gaussian_noise_test.cpp):
// x86-64 CPUs with AES-NI run eight blocks in flight (chosen at run time,
// so the binary still runs on a CPU without it); every other CPU uses
// mbedTLS's AES, one block at a time.
#ifndef BLUR_TRAINER_RANDOM_AES_CTR_H
#define BLUR_TRAINER_RANDOM_AES_CTR_H

#include <array>
#include <cstddef>
#include <cstdint>

namespace blur::trainer {

class AesCtr {
 public:
  AesCtr(const std::array<uint8_t, 32>& key, const std::array<uint8_t, 8>& prefix,
         bool allow_aes_ni = true);
  ~AesCtr();
  AesCtr(const AesCtr&) = delete;
  AesCtr& operator=(const AesCtr&) = delete;

  // Writes blocks first .. first + count - 1 (16 bytes each) to out.
  void blocks(uint64_t first, size_t count, uint8_t* out) const;
  bool uses_aes_ni() const { return aes_ni_; }

 private:
  bool aes_ni_;
  std::array<uint8_t, 8> prefix_;
  // AES-256 round keys: 15 x 16 bytes (AES-NI), or mbedTLS's context.
  alignas(16) std::array<uint8_t, 15 * 16> round_keys_{};
  struct Portable;
  Portable* portable_ = nullptr;
};

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_RANDOM_AES_CTR_H
