// The standard facilities the SDK uses, written out for toolchains that ship
// no C++ standard library (Debian's riscv64-unknown-elf gcc has no
// libstdc++, so not even the freestanding <type_traits>). Only what the SDK,
// its ports and its bare-metal tests use, each with the standard's meaning;
// tests/sdk/std_compat_test.cpp holds every trait here to a table that the
// host's libstdc++ must agree with.
//
// Everything is in blur::std_compat, so this header compiles beside a real
// standard library (the host test does that); blur/compat/std_facilities.h
// lends these names to namespace std only where the toolchain has none.
#ifndef BLUR_COMPAT_STD_FALLBACK_H
#define BLUR_COMPAT_STD_FALLBACK_H

namespace blur {
namespace std_compat {

template <typename T, T v>
struct integral_constant {
  static constexpr T value = v;
  using value_type = T;
  using type = integral_constant;
  constexpr operator value_type() const noexcept { return value; }
  constexpr value_type operator()() const noexcept { return value; }
};
template <bool v>
using bool_constant = integral_constant<bool, v>;
using true_type = bool_constant<true>;
using false_type = bool_constant<false>;

template <typename...>
using void_t = void;

// --- cv and reference ---------------------------------------------------------
template <typename T> struct remove_const { using type = T; };
template <typename T> struct remove_const<const T> { using type = T; };
template <typename T> struct remove_volatile { using type = T; };
template <typename T> struct remove_volatile<volatile T> { using type = T; };
template <typename T>
struct remove_cv {
  using type = typename remove_const<typename remove_volatile<T>::type>::type;
};
template <typename T> using remove_cv_t = typename remove_cv<T>::type;

template <typename T> struct remove_reference { using type = T; };
template <typename T> struct remove_reference<T&> { using type = T; };
template <typename T> struct remove_reference<T&&> { using type = T; };
template <typename T> using remove_reference_t = typename remove_reference<T>::type;

namespace detail {
// T&& where that is a type (not for void or an abominable function type).
template <typename T> auto try_add_rvalue_reference(int) -> T&&;
template <typename T> auto try_add_rvalue_reference(...) -> T;
}  // namespace detail
template <typename T>
struct add_rvalue_reference {
  using type = decltype(detail::try_add_rvalue_reference<T>(0));
};

// Only in unevaluated operands (decltype, sizeof): it has no definition.
template <typename T>
typename add_rvalue_reference<T>::type declval() noexcept;

// --- type categories ----------------------------------------------------------
template <typename T, typename U> struct is_same : false_type {};
template <typename T> struct is_same<T, T> : true_type {};
template <typename T, typename U> inline constexpr bool is_same_v = is_same<T, U>::value;

template <typename T> struct is_void : is_same<remove_cv_t<T>, void> {};
template <typename T> inline constexpr bool is_void_v = is_void<T>::value;

template <typename T> struct is_const : false_type {};
template <typename T> struct is_const<const T> : true_type {};

template <typename T> struct is_reference : false_type {};
template <typename T> struct is_reference<T&> : true_type {};
template <typename T> struct is_reference<T&&> : true_type {};

template <typename T> struct is_array : false_type {};
template <typename T> struct is_array<T[]> : true_type {};
template <typename T, decltype(sizeof 0) N> struct is_array<T[N]> : true_type {};

// Functions and references are the types that `const` does not stick to.
template <typename T>
struct is_function : bool_constant<!is_const<const T>::value && !is_reference<T>::value> {};

namespace detail {
template <typename T> struct is_integral_unqualified : false_type {};
template <> struct is_integral_unqualified<bool> : true_type {};
template <> struct is_integral_unqualified<char> : true_type {};
template <> struct is_integral_unqualified<signed char> : true_type {};
template <> struct is_integral_unqualified<unsigned char> : true_type {};
template <> struct is_integral_unqualified<wchar_t> : true_type {};
template <> struct is_integral_unqualified<char16_t> : true_type {};
template <> struct is_integral_unqualified<char32_t> : true_type {};
template <> struct is_integral_unqualified<short> : true_type {};
template <> struct is_integral_unqualified<unsigned short> : true_type {};
template <> struct is_integral_unqualified<int> : true_type {};
template <> struct is_integral_unqualified<unsigned int> : true_type {};
template <> struct is_integral_unqualified<long> : true_type {};
template <> struct is_integral_unqualified<unsigned long> : true_type {};
template <> struct is_integral_unqualified<long long> : true_type {};
template <> struct is_integral_unqualified<unsigned long long> : true_type {};

template <typename T> struct is_floating_point_unqualified : false_type {};
template <> struct is_floating_point_unqualified<float> : true_type {};
template <> struct is_floating_point_unqualified<double> : true_type {};
template <> struct is_floating_point_unqualified<long double> : true_type {};
}  // namespace detail

template <typename T>
struct is_integral : detail::is_integral_unqualified<remove_cv_t<T>> {};
template <typename T>
struct is_floating_point : detail::is_floating_point_unqualified<remove_cv_t<T>> {};

template <typename T>
struct is_enum : bool_constant<__is_enum(T)> {};

namespace detail {
template <typename T, bool = is_integral<T>::value || is_floating_point<T>::value>
struct is_signed_arithmetic : false_type {};
template <typename T>
struct is_signed_arithmetic<T, true> : bool_constant<remove_cv_t<T>(-1) < remove_cv_t<T>(0)> {};
}  // namespace detail
template <typename T>
struct is_signed : detail::is_signed_arithmetic<T> {};

// --- type properties (the compilers' own intrinsics, as every library does) ---
template <typename T>
struct is_trivially_copyable : bool_constant<__is_trivially_copyable(T)> {};
template <typename T>
inline constexpr bool is_trivially_copyable_v = is_trivially_copyable<T>::value;

// For the complete object types the SDK asks about; the standard's answer
// for void, references and unbounded arrays is not needed here.
template <typename T>
#if defined(__clang__)
struct is_trivially_destructible : bool_constant<__is_trivially_destructible(T)> {};
#else
struct is_trivially_destructible : bool_constant<__has_trivial_destructor(T)> {};
#endif

// --- conversions --------------------------------------------------------------
namespace detail {
template <typename From, typename To,
          bool = is_void<From>::value || is_function<To>::value || is_array<To>::value>
struct is_convertible_helper : is_void<To> {};
template <typename From, typename To>
struct is_convertible_helper<From, To, false> {
 private:
  template <typename T>
  static void accept(T) noexcept;
  template <typename F, typename T, typename = decltype(accept<T>(declval<F>()))>
  static true_type test(int);
  template <typename, typename>
  static false_type test(...);

 public:
  static constexpr bool value = decltype(test<From, To>(0))::value;
};
}  // namespace detail
template <typename From, typename To>
struct is_convertible : bool_constant<detail::is_convertible_helper<From, To>::value> {};

// --- decay: what a by-value parameter makes of T --------------------------------
template <typename T> struct remove_extent { using type = T; };
template <typename T> struct remove_extent<T[]> { using type = T; };
template <typename T, decltype(sizeof 0) N> struct remove_extent<T[N]> { using type = T; };

namespace detail {
template <typename U, bool = is_array<U>::value, bool = is_function<U>::value>
struct decay_unreferenced {
  using type = remove_cv_t<U>;
};
template <typename U>
struct decay_unreferenced<U, true, false> {
  using type = typename remove_extent<U>::type*;
};
template <typename U>
struct decay_unreferenced<U, false, true> {
  using type = U*;
};
}  // namespace detail
template <typename T>
struct decay {
  using type = typename detail::decay_unreferenced<remove_reference_t<T>>::type;
};
template <typename T> using decay_t = typename decay<T>::type;

}  // namespace std_compat
}  // namespace blur

#endif  // BLUR_COMPAT_STD_FALLBACK_H
