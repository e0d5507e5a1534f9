// The standard facilities' fallbacks (blur/compat/std_fallback.h), which
// the SDK uses where the toolchain has no C++ library (RISC-V). Every trait
// is checked against one table of expected answers, twice: the fallback in
// blur::std_compat, and std's own. On the host, std's is libstdc++, so the
// table itself is held to the real library; on RISC-V, std's names are the
// fallbacks (blur/compat/std_facilities.h), so the table checks what the SDK
// compiles with there.
#include <gtest/gtest.h>
#include <stdint.h>

#include "blur/compat/std_facilities.h"
#include "blur/compat/std_fallback.h"

namespace {

enum Plain { kPlainValue };
enum class Scoped : uint8_t { kValue };
struct Trivial {
  int a;
  char b;
};
struct WithDestructor {
  ~WithDestructor() {}
};
struct WithCopy {
  WithCopy() = default;
  WithCopy(const WithCopy&) {}
};
struct Base {};
struct Derived : Base {};
struct FromInt {
  FromInt(int) {}  // NOLINT(google-explicit-constructor): implicit on purpose
};
struct ExplicitFromInt {
  explicit ExplicitFromInt(int) {}
};
struct ToInt {
  operator int() const { return 1; }  // NOLINT(google-explicit-constructor)
};
using Function = int(int);

namespace compat = blur::std_compat;

// Each check: the fallback and std agree with the table's answer.
#define BLUR_CHECK_TRAIT(trait, expected, ...)                                          \
  static_assert(compat::trait<__VA_ARGS__>::value == (expected), "std_compat::" #trait); \
  static_assert(std::trait<__VA_ARGS__>::value == (expected), "std::" #trait)

BLUR_CHECK_TRAIT(is_same, true, int, int);
BLUR_CHECK_TRAIT(is_same, false, int, const int);
BLUR_CHECK_TRAIT(is_same, false, int, unsigned);
BLUR_CHECK_TRAIT(is_same, false, int, int&);
BLUR_CHECK_TRAIT(is_same, false, Base, Derived);

BLUR_CHECK_TRAIT(is_void, true, void);
BLUR_CHECK_TRAIT(is_void, true, const volatile void);
BLUR_CHECK_TRAIT(is_void, false, void*);
BLUR_CHECK_TRAIT(is_void, false, int);

BLUR_CHECK_TRAIT(is_integral, true, bool);
BLUR_CHECK_TRAIT(is_integral, true, char);
BLUR_CHECK_TRAIT(is_integral, true, signed char);
BLUR_CHECK_TRAIT(is_integral, true, const unsigned char);
BLUR_CHECK_TRAIT(is_integral, true, wchar_t);
BLUR_CHECK_TRAIT(is_integral, true, char16_t);
BLUR_CHECK_TRAIT(is_integral, true, char32_t);
BLUR_CHECK_TRAIT(is_integral, true, volatile short);
BLUR_CHECK_TRAIT(is_integral, true, uint16_t);
BLUR_CHECK_TRAIT(is_integral, true, int32_t);
BLUR_CHECK_TRAIT(is_integral, true, const volatile uint32_t);
BLUR_CHECK_TRAIT(is_integral, true, long);
BLUR_CHECK_TRAIT(is_integral, true, unsigned long);
BLUR_CHECK_TRAIT(is_integral, true, int64_t);
BLUR_CHECK_TRAIT(is_integral, true, uint64_t);
BLUR_CHECK_TRAIT(is_integral, true, size_t);
BLUR_CHECK_TRAIT(is_integral, false, float);
BLUR_CHECK_TRAIT(is_integral, false, int*);
BLUR_CHECK_TRAIT(is_integral, false, int&);
BLUR_CHECK_TRAIT(is_integral, false, Plain);
BLUR_CHECK_TRAIT(is_integral, false, Scoped);
BLUR_CHECK_TRAIT(is_integral, false, decltype(nullptr));

BLUR_CHECK_TRAIT(is_floating_point, true, float);
BLUR_CHECK_TRAIT(is_floating_point, true, const double);
BLUR_CHECK_TRAIT(is_floating_point, true, long double);
BLUR_CHECK_TRAIT(is_floating_point, false, int);
BLUR_CHECK_TRAIT(is_floating_point, false, double&);

BLUR_CHECK_TRAIT(is_signed, true, int);
BLUR_CHECK_TRAIT(is_signed, true, const signed char);
BLUR_CHECK_TRAIT(is_signed, true, int64_t);
BLUR_CHECK_TRAIT(is_signed, true, double);
BLUR_CHECK_TRAIT(is_signed, false, bool);
BLUR_CHECK_TRAIT(is_signed, false, unsigned);
BLUR_CHECK_TRAIT(is_signed, false, uint64_t);
BLUR_CHECK_TRAIT(is_signed, false, Plain);
BLUR_CHECK_TRAIT(is_signed, false, int*);
BLUR_CHECK_TRAIT(is_signed, false, Trivial);

BLUR_CHECK_TRAIT(is_enum, true, Plain);
BLUR_CHECK_TRAIT(is_enum, true, const Scoped);
BLUR_CHECK_TRAIT(is_enum, false, int);
BLUR_CHECK_TRAIT(is_enum, false, Trivial);

BLUR_CHECK_TRAIT(is_trivially_copyable, true, int);
BLUR_CHECK_TRAIT(is_trivially_copyable, true, Trivial);
BLUR_CHECK_TRAIT(is_trivially_copyable, true, Trivial[4]);
BLUR_CHECK_TRAIT(is_trivially_copyable, true, Scoped);
BLUR_CHECK_TRAIT(is_trivially_copyable, false, WithDestructor);
BLUR_CHECK_TRAIT(is_trivially_copyable, false, WithCopy);

BLUR_CHECK_TRAIT(is_trivially_destructible, true, int);
BLUR_CHECK_TRAIT(is_trivially_destructible, true, Trivial);
BLUR_CHECK_TRAIT(is_trivially_destructible, true, WithCopy);
BLUR_CHECK_TRAIT(is_trivially_destructible, false, WithDestructor);
BLUR_CHECK_TRAIT(is_trivially_destructible, false, WithDestructor[2]);

BLUR_CHECK_TRAIT(is_convertible, true, int, long);
BLUR_CHECK_TRAIT(is_convertible, true, Derived*, Base*);
BLUR_CHECK_TRAIT(is_convertible, false, Base*, Derived*);
BLUR_CHECK_TRAIT(is_convertible, true, char*, const char*);
BLUR_CHECK_TRAIT(is_convertible, true, char[4], const char*);
BLUR_CHECK_TRAIT(is_convertible, true, const char (&)[4], const char*);
BLUR_CHECK_TRAIT(is_convertible, false, const char*, char*);
BLUR_CHECK_TRAIT(is_convertible, false, int, const char*);
BLUR_CHECK_TRAIT(is_convertible, true, decltype(nullptr), const char*);
BLUR_CHECK_TRAIT(is_convertible, true, int, FromInt);
BLUR_CHECK_TRAIT(is_convertible, false, int, ExplicitFromInt);
BLUR_CHECK_TRAIT(is_convertible, true, ToInt, int);
BLUR_CHECK_TRAIT(is_convertible, true, void, void);
BLUR_CHECK_TRAIT(is_convertible, false, int, void);
BLUR_CHECK_TRAIT(is_convertible, false, void, int);
BLUR_CHECK_TRAIT(is_convertible, false, int, int[2]);
BLUR_CHECK_TRAIT(is_convertible, false, Function, Function);
BLUR_CHECK_TRAIT(is_convertible, true, Function, Function*);
BLUR_CHECK_TRAIT(is_convertible, true, Function&, Function*);
BLUR_CHECK_TRAIT(is_convertible, true, Plain, int);
BLUR_CHECK_TRAIT(is_convertible, false, Scoped, int);

// decay_t: what a by-value parameter makes of a type.
#define BLUR_CHECK_DECAY(from, to)                                                   \
  static_assert(std::is_same<compat::decay_t<from>, to>::value, "std_compat::decay"); \
  static_assert(std::is_same<std::decay_t<from>, to>::value, "std::decay")
BLUR_CHECK_DECAY(int, int);
BLUR_CHECK_DECAY(const int, int);
BLUR_CHECK_DECAY(const volatile int&, int);
BLUR_CHECK_DECAY(Trivial&&, Trivial);
BLUR_CHECK_DECAY(int[3], int*);
BLUR_CHECK_DECAY(const int (&)[3], const int*);
BLUR_CHECK_DECAY(int[], int*);
BLUR_CHECK_DECAY(Function, Function*);
BLUR_CHECK_DECAY(Function&, Function*);
BLUR_CHECK_DECAY(int* const, int*);

// The _v forms, void_t, the constants and declval, as the SDK writes them.
static_assert(compat::is_same_v<int, int> && std::is_same_v<int, int>, "is_same_v");
static_assert(!compat::is_same_v<int, long> && !std::is_same_v<int, long>, "is_same_v");
static_assert(compat::is_void_v<const void> && std::is_void_v<const void>, "is_void_v");
static_assert(!compat::is_void_v<int> && !std::is_void_v<int>, "is_void_v");
static_assert(compat::is_trivially_copyable_v<Trivial> && std::is_trivially_copyable_v<Trivial>,
              "is_trivially_copyable_v");
static_assert(!compat::is_trivially_copyable_v<WithCopy> &&
                  !std::is_trivially_copyable_v<WithCopy>,
              "is_trivially_copyable_v");
static_assert(compat::true_type::value && !compat::false_type::value && compat::true_type{}(),
              "constants");
static_assert(std::is_same<compat::void_t<int, Trivial>, void>::value, "void_t");
static_assert(std::is_same<decltype(compat::declval<Trivial>()), Trivial&&>::value, "declval");
static_assert(std::is_same<decltype(compat::declval<Trivial&>()), Trivial&>::value, "declval");
static_assert(std::is_same<decltype(compat::declval<void>()), void>::value, "declval");
static_assert(std::is_same<decltype(std::declval<const Trivial&>().a), int>::value, "declval");

// Detection the SDK's mechanism table does (blur/mechanisms/mechanism.h).
template <typename T, typename = void>
struct HasA : compat::false_type {};
template <typename T>
struct HasA<T, compat::void_t<decltype(compat::declval<const T&>().a)>> : compat::true_type {};
static_assert(HasA<Trivial>::value && !HasA<Base>::value, "detection with void_t");

TEST(StdCompat, PlacementNewConstructsInTheCallersStorage) {
  alignas(Trivial) static unsigned char storage[sizeof(Trivial)];
  Trivial* made = new (storage) Trivial{41, 'x'};
  EXPECT_EQ(static_cast<void*>(made), static_cast<void*>(storage));
  EXPECT_EQ(made->a, 41);
  EXPECT_EQ(made->b, 'x');
}

int sum(std::initializer_list<int> values) {
  int total = 0;
  for (int value : values) total += value;
  return total;
}

TEST(StdCompat, BracedListsAreInitializerLists) {
  EXPECT_EQ(sum({}), 0);
  EXPECT_EQ(sum({7}), 7);
  EXPECT_EQ(sum({1, 20, 300}), 321);
  const std::initializer_list<int> list = {5, 6, 7};
  EXPECT_EQ(list.size(), 3u);
  EXPECT_EQ(*list.begin(), 5);
  EXPECT_EQ(list.end() - list.begin(), 3);
}

// Only a toolchain without a C++ library takes the fallbacks.
#if __has_include(<type_traits>)
constexpr bool kToolchainHasTypeTraits = true;
#else
constexpr bool kToolchainHasTypeTraits = false;
#endif
#if defined(BLUR_STD_FALLBACK)
constexpr bool kFallbackTaken = true;
#else
constexpr bool kFallbackTaken = false;
#endif

TEST(StdCompat, TheToolchainsLibraryIsUsedWhereItExists) {
  EXPECT_NE(kToolchainHasTypeTraits, kFallbackTaken);
}

}  // namespace
