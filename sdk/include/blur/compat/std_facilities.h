// The few standard library facilities the SDK uses: type traits, declval,
// placement new, and std::initializer_list for braced lists. Include this
// instead of <type_traits>, <utility>, <new> or <initializer_list>.
//
// Where the toolchain has those headers (every hosted compiler,
// arm-none-eabi with its libstdc++), they are what this includes. Where it
// has none (Debian's riscv64-unknown-elf gcc ships no libstdc++), the
// fallbacks of blur/compat/std_fallback.h are declared in namespace std
// under their standard names, so the SDK's code reads the same on every
// target. It is not a standard library: only what the SDK needs is here.
#ifndef BLUR_COMPAT_STD_FACILITIES_H
#define BLUR_COMPAT_STD_FACILITIES_H

#if __has_include(<type_traits>)

#include <initializer_list>
#include <new>
#include <type_traits>
#include <utility>

#else  // no C++ standard library

#include <stddef.h>

#include "blur/compat/std_fallback.h"

#define BLUR_STD_FALLBACK 1

namespace std {

using blur::std_compat::bool_constant;
using blur::std_compat::decay;
using blur::std_compat::decay_t;
using blur::std_compat::declval;
using blur::std_compat::false_type;
using blur::std_compat::integral_constant;
using blur::std_compat::is_convertible;
using blur::std_compat::is_enum;
using blur::std_compat::is_floating_point;
using blur::std_compat::is_integral;
using blur::std_compat::is_same;
using blur::std_compat::is_same_v;
using blur::std_compat::is_signed;
using blur::std_compat::is_trivially_copyable;
using blur::std_compat::is_trivially_copyable_v;
using blur::std_compat::is_trivially_destructible;
using blur::std_compat::is_void;
using blur::std_compat::is_void_v;
using blur::std_compat::remove_cv;
using blur::std_compat::remove_cv_t;
using blur::std_compat::remove_reference;
using blur::std_compat::remove_reference_t;
using blur::std_compat::true_type;
using blur::std_compat::void_t;

// The compiler builds braced lists as this class (a pointer to the array,
// then its length: GCC's and Clang's layout), so it must be std's own.
template <typename E>
class initializer_list {
 public:
  using value_type = E;
  using reference = const E&;
  using const_reference = const E&;
  using size_type = size_t;
  using iterator = const E*;
  using const_iterator = const E*;

  constexpr initializer_list() noexcept : array_(nullptr), length_(0) {}
  constexpr size_t size() const noexcept { return length_; }
  constexpr const E* begin() const noexcept { return array_; }
  constexpr const E* end() const noexcept { return array_ + length_; }

 private:
  constexpr initializer_list(const E* array, size_t length) noexcept
      : array_(array), length_(length) {}
  const E* array_;
  size_t length_;
};

}  // namespace std

// Placement new, which <new> declares.
inline void* operator new(size_t, void* where) noexcept { return where; }
inline void* operator new[](size_t, void* where) noexcept { return where; }
inline void operator delete(void*, void*) noexcept {}
inline void operator delete[](void*, void*) noexcept {}

#endif  // __has_include(<type_traits>)

#endif  // BLUR_COMPAT_STD_FACILITIES_H
