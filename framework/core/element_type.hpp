// Element types of topic frames, and the mapping between their names and C++ types.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "framework/core/exec_space.hpp"

namespace xf {

enum class element_type : std::uint8_t { u8, i8, u16, i16, u32, i32, u64, i64, f32, f64 };

inline constexpr element_type all_element_types[] = {
    element_type::u8,  element_type::i8,  element_type::u16, element_type::i16, element_type::u32,
    element_type::i32, element_type::u64, element_type::i64, element_type::f32, element_type::f64};

constexpr std::string_view name_of(element_type t) {
  switch (t) {
    case element_type::u8:
      return "u8";
    case element_type::i8:
      return "i8";
    case element_type::u16:
      return "u16";
    case element_type::i16:
      return "i16";
    case element_type::u32:
      return "u32";
    case element_type::i32:
      return "i32";
    case element_type::u64:
      return "u64";
    case element_type::i64:
      return "i64";
    case element_type::f32:
      return "f32";
    case element_type::f64:
      return "f64";
  }
  return "?";
}

constexpr std::size_t size_of(element_type t) {
  switch (t) {
    case element_type::u8:
    case element_type::i8:
      return 1;
    case element_type::u16:
    case element_type::i16:
      return 2;
    case element_type::u32:
    case element_type::i32:
    case element_type::f32:
      return 4;
    default:
      return 8;
  }
}

/// A set of element types: what an operator accepts on its topics. A bit per enumerator, so operators can
/// declare theirs as a constant (`static constexpr element_set elements{element_type::f32};`) and the
/// kernel's dispatch compiles their code for those types only.
class element_set {
 public:
  constexpr element_set() = default;
  constexpr element_set(std::initializer_list<element_type> types) {
    for (element_type t : types) bits_ |= bit(t);
  }
  static constexpr element_set all() {
    element_set s;
    for (element_type t : all_element_types) s.bits_ |= bit(t);
    return s;
  }
  constexpr bool contains(element_type t) const { return (bits_ & bit(t)) != 0; }
  constexpr bool operator==(const element_set&) const = default;

 private:
  static constexpr std::uint32_t bit(element_type t) { return std::uint32_t{1} << static_cast<unsigned>(t); }
  std::uint32_t bits_ = 0;
};

/// The names of the types in `s`, "u32, f32" (in enumerator order).
inline std::string names_of(element_set s) {
  std::string text;
  for (element_type t : all_element_types)
    if (s.contains(t)) {
      if (!text.empty()) text += ", ";
      text += name_of(t);
    }
  return text;
}

constexpr std::optional<element_type> element_type_from_name(std::string_view name) {
  for (element_type t : all_element_types)
    if (name_of(t) == name) return t;
  return std::nullopt;
}

template <class T>
struct element_of;
template <>
struct element_of<std::uint8_t> {
  static constexpr element_type value = element_type::u8;
};
template <>
struct element_of<std::int8_t> {
  static constexpr element_type value = element_type::i8;
};
template <>
struct element_of<std::uint16_t> {
  static constexpr element_type value = element_type::u16;
};
template <>
struct element_of<std::int16_t> {
  static constexpr element_type value = element_type::i16;
};
template <>
struct element_of<std::uint32_t> {
  static constexpr element_type value = element_type::u32;
};
template <>
struct element_of<std::int32_t> {
  static constexpr element_type value = element_type::i32;
};
template <>
struct element_of<std::uint64_t> {
  static constexpr element_type value = element_type::u64;
};
template <>
struct element_of<std::int64_t> {
  static constexpr element_type value = element_type::i64;
};
template <>
struct element_of<float> {
  static constexpr element_type value = element_type::f32;
};
template <>
struct element_of<double> {
  static constexpr element_type value = element_type::f64;
};

/// Calls `fn(T{})` with the C++ type of `t` (a value of it, for deduction). Host and device code.
template <class Fn>
XF_HOST_DEVICE decltype(auto) visit_element(element_type t, Fn&& fn) {
  switch (t) {
    case element_type::u8:
      return fn(std::uint8_t{});
    case element_type::i8:
      return fn(std::int8_t{});
    case element_type::u16:
      return fn(std::uint16_t{});
    case element_type::i16:
      return fn(std::int16_t{});
    case element_type::u32:
      return fn(std::uint32_t{});
    case element_type::i32:
      return fn(std::int32_t{});
    case element_type::u64:
      return fn(std::uint64_t{});
    case element_type::i64:
      return fn(std::int64_t{});
    case element_type::f32:
      return fn(float{});
    case element_type::f64:
      return fn(double{});
  }
  return fn(std::uint8_t{});
}

}  // namespace xf
