// A GoogleTest-compatible subset for bare-metal targets (the idea of
// Pigweed's pw_unit_test): the same test sources build against real
// GoogleTest on hosts and against this header on Cortex-M, where GoogleTest
// cannot run (it needs an OS, heap and exceptions). No heap: tests register
// in a static linked list; output goes through printf (semihosting).
//
// Supported: TEST, EXPECT_/ASSERT_ {TRUE, FALSE, EQ, NE, LT, LE, GT, GE},
// and `<< message` after an assertion.
#ifndef BLUR_MINI_GTEST_H
#define BLUR_MINI_GTEST_H

#include <stdint.h>
#include <stdio.h>

#include "blur/compat/std_facilities.h"

namespace testing {

struct TestInfo {
  const char* suite;
  const char* name;
  void (*body)();
  TestInfo* next;
};

TestInfo*& test_list();
bool& current_test_failed();
int RunAllTests();

struct Registrar {
  explicit Registrar(TestInfo* info) {
    TestInfo** tail = &test_list();
    while (*tail != nullptr) tail = &(*tail)->next;
    *tail = info;
  }
};

// Prints a value for a failure message: integers, enums, bools, nullptr, text.
template <typename T>
void print_value(const T& v) {
  if constexpr (std::is_same<T, bool>::value) {
    printf("%s", v ? "true" : "false");
  } else if constexpr (std::is_enum<T>::value) {
    printf("%lld", static_cast<long long>(v));
  } else if constexpr (std::is_integral<T>::value && std::is_signed<T>::value) {
    printf("%lld", static_cast<long long>(v));
  } else if constexpr (std::is_integral<T>::value) {
    printf("%llu", static_cast<unsigned long long>(v));
  } else if constexpr (std::is_floating_point<T>::value) {
    printf("%ld.%06ld", static_cast<long>(v), static_cast<long>((v < 0 ? -v : v) * 1e6) % 1000000);
  } else if constexpr (std::is_same<T, decltype(nullptr)>::value) {
    printf("nullptr");
  } else if constexpr (std::is_convertible<T, const char*>::value) {
    printf("%s", static_cast<const char*>(v));
  } else {
    printf("(value)");
  }
}

// Swallows (or prints, after a failure) `<< message` parts.
class Message {
 public:
  explicit Message(bool active) : active_(active) {}
  ~Message() {
    if (active_) printf("\n");
  }
  template <typename T>
  Message& operator<<(const T& v) {
    if (active_) print_value(v);
    return *this;
  }

 private:
  bool active_;
};

// Turns `Voidify() = Message(...) << ...` into a void expression, so fatal
// assertions can `return` it from a test body.
struct Voidify {
  void operator=(const Message&) const {}
};

// Each operand is evaluated exactly once (as in GoogleTest).
#define MINI_GTEST_DEFINE_OP(name, op)              \
  struct name {                                     \
    static constexpr const char* text = #op;        \
    template <typename A, typename B>               \
    bool operator()(const A& a, const B& b) const { \
      return a op b;                                \
    }                                               \
  };
MINI_GTEST_DEFINE_OP(OpEq, ==)
MINI_GTEST_DEFINE_OP(OpNe, !=)
MINI_GTEST_DEFINE_OP(OpLt, <)
MINI_GTEST_DEFINE_OP(OpLe, <=)
MINI_GTEST_DEFINE_OP(OpGt, >)
MINI_GTEST_DEFINE_OP(OpGe, >=)
#undef MINI_GTEST_DEFINE_OP

template <typename Op, typename A, typename B>
bool report_compare(Op op, const char* a_text, const char* b_text, const A& a, const B& b,
                    const char* file, int line) {
  if (op(a, b)) return true;
  current_test_failed() = true;
  printf("%s:%d: Failure: expected %s %s %s, got ", file, line, a_text, Op::text, b_text);
  print_value(a);
  printf(" vs ");
  print_value(b);
  printf("\n  ");
  return false;
}

inline bool report_bool(bool ok, const char* text, bool expected, const char* file, int line) {
  if (ok) return true;
  current_test_failed() = true;
  printf("%s:%d: Failure: expected %s to be %s\n  ", file, line, text, expected ? "true" : "false");
  return false;
}

}  // namespace testing

#define MINI_GTEST_NAME(suite, name) suite##_##name##_Test

#define TEST(suite, name)                                             \
  static void MINI_GTEST_NAME(suite, name)();                         \
  static ::testing::TestInfo MINI_GTEST_NAME(suite, name##_info) = {  \
      #suite, #name, &MINI_GTEST_NAME(suite, name), nullptr};         \
  static ::testing::Registrar MINI_GTEST_NAME(                        \
      suite, name##_registrar)(&MINI_GTEST_NAME(suite, name##_info)); \
  static void MINI_GTEST_NAME(suite, name)()

// `if (ok) ; else` makes a following `<< message` bind to the failure branch.
#define MINI_GTEST_CHECK(ok_expr, on_fail) \
  if (ok_expr)                             \
    ;                                      \
  else                                     \
    on_fail ::testing::Message(true)

#define MINI_GTEST_CMP(a, b, op, on_fail)                                                        \
  MINI_GTEST_CHECK(::testing::report_compare(::testing::op{}, #a, #b, a, b, __FILE__, __LINE__), \
                   on_fail)

#define EXPECT_EQ(a, b) MINI_GTEST_CMP(a, b, OpEq, )
#define EXPECT_NE(a, b) MINI_GTEST_CMP(a, b, OpNe, )
#define EXPECT_LT(a, b) MINI_GTEST_CMP(a, b, OpLt, )
#define EXPECT_LE(a, b) MINI_GTEST_CMP(a, b, OpLe, )
#define EXPECT_GT(a, b) MINI_GTEST_CMP(a, b, OpGt, )
#define EXPECT_GE(a, b) MINI_GTEST_CMP(a, b, OpGe, )
#define ASSERT_EQ(a, b) MINI_GTEST_CMP(a, b, OpEq, return ::testing::Voidify() =)
#define ASSERT_NE(a, b) MINI_GTEST_CMP(a, b, OpNe, return ::testing::Voidify() =)
#define ASSERT_LT(a, b) MINI_GTEST_CMP(a, b, OpLt, return ::testing::Voidify() =)
#define ASSERT_LE(a, b) MINI_GTEST_CMP(a, b, OpLe, return ::testing::Voidify() =)
#define ASSERT_GT(a, b) MINI_GTEST_CMP(a, b, OpGt, return ::testing::Voidify() =)
#define ASSERT_GE(a, b) MINI_GTEST_CMP(a, b, OpGe, return ::testing::Voidify() =)
#define EXPECT_TRUE(c) \
  MINI_GTEST_CHECK(::testing::report_bool(static_cast<bool>(c), #c, true, __FILE__, __LINE__), )
#define EXPECT_FALSE(c) \
  MINI_GTEST_CHECK(::testing::report_bool(!static_cast<bool>(c), #c, false, __FILE__, __LINE__), )
#define ASSERT_TRUE(c)                                                                         \
  MINI_GTEST_CHECK(::testing::report_bool(static_cast<bool>(c), #c, true, __FILE__, __LINE__), \
                   return ::testing::Voidify() =)
#define ASSERT_FALSE(c)                                                                          \
  MINI_GTEST_CHECK(::testing::report_bool(!static_cast<bool>(c), #c, false, __FILE__, __LINE__), \
                   return ::testing::Voidify() =)

#endif  // BLUR_MINI_GTEST_H
