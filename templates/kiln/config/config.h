// kiln/config/config.h — how a template family declares its typed config.
//
// [Note: one contract per template family]
// A family's config is the whole of what the planner decides for one kernel and the emitter
// and the template consume: tile sizes, thread counts, split counts, the bound extents the
// launch depends on. It is declared once, in templates/kiln/config/<family>.h, with
// KILN_CONFIG:
//
//     #define KILN_IOTA_FIELDS(X) X(int, threads, 256) X(long long, len, 1) X(long long, inner, 1)
//     KILN_CONFIG(IotaConfig, KILN_IOTA_FIELDS);
//
// (one X(type, name, default) per field, usually one per line with a comment), which gives a
// literal aggregate (usable in constant expressions by the planner on the host and by the
// template under NVRTC), and on the host: `visit` over (name, value) pairs in
// declaration order, `==` (defaulted), to_string() ("IotaConfig{threads=256 len=8 inner=1}"),
// hash() and literal() (the C++ initializer the emitter writes into a unit). The fields are
// listed once, so none of these can forget one.
//
// Derived quantities (shared memory, grid, block, workspace) are KILN_RULE constexpr functions
// of the config in the same header. The planner sets the launch from them, the template sizes
// its shared memory with them, and the generated unit static_asserts that the two agree.
//
// The header is plain C++ with no includes under NVRTC (templates have no standard library
// there); the host-only part uses <string>.
#pragma once

#include "kiln/launch_rules.h"   // KILN_RULE, launch::Geometry

#if !defined(__CUDACC_RTC__)
#include <cstdint>
#include <string>
#include <type_traits>
#endif

namespace kiln {

#if !defined(__CUDACC_RTC__)
namespace config_detail {

// A field's value as text: integers in decimal, bools as 0/1 (the planner's old `params`
// spelling), enums by the enumerator name that `enum_name(E)` (found by ADL) gives.
template <class T>
std::string value_text(const T& v) {
  if constexpr (std::is_enum_v<T>) {
    return enum_name(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else {
    return std::to_string(v);
  }
}

// A field's value as a C++ expression for a generated unit.
template <class T>
std::string value_literal(const T& v, const char* type) {
  if constexpr (std::is_enum_v<T>) {
    return std::string("kiln::") + type + "::" + enum_name(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else {
    return std::to_string(v);
  }
}

inline std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

}  // namespace config_detail

// Defaulted == needs C++20 (the host build); a C++17 host (nvcc's default) goes without.
#if __cplusplus >= 202002L
#define KILN_CONFIG_EQUALITY(Name) bool operator==(const Name&) const = default;
#else
#define KILN_CONFIG_EQUALITY(Name)
#endif

// The host-side half of KILN_CONFIG: defined for every config type by the macro.
#define KILN_CONFIG_HOST_PART(Name)                                                                       \
  KILN_CONFIG_EQUALITY(Name)                                                                              \
  std::string to_string() const {                                                                         \
    std::string s = #Name "{";                                                                            \
    bool first = true;                                                                                    \
    visit([&](const char* field, const auto& v, const char*) {                                            \
      s += (first ? "" : " ") + std::string(field) + "=" + ::kiln::config_detail::value_text(v);          \
      first = false;                                                                                      \
    });                                                                                                   \
    return s + "}";                                                                                       \
  }                                                                                                       \
  std::uint64_t hash() const { return ::kiln::config_detail::fnv1a(to_string()); }                        \
  /* the initializer a unit declares its config with: kiln::Name{<field comment> value, ...} */           \
  std::string literal() const {                                                                           \
    std::string s = "kiln::" #Name "{";                                                                   \
    bool first = true;                                                                                    \
    visit([&](const char* field, const auto& v, const char* type) {                                       \
      s += (first ? "" : ", ") + std::string("/*") + field + "=*/" + ::kiln::config_detail::value_literal(v, type); \
      first = false;                                                                                      \
    });                                                                                                   \
    return s + "}";                                                                                       \
  }
#define KILN_CONFIG_VISIT_FIELD(type, name, init) f(#name, name, #type);
#else
#define KILN_CONFIG_HOST_PART(Name)
#endif

#define KILN_CONFIG_MEMBER(type, name, init) type name = init;

#if !defined(__CUDACC_RTC__)
#define KILN_CONFIG(Name, FIELDS)                                            \
  struct Name {                                                              \
    FIELDS(KILN_CONFIG_MEMBER)                                               \
    static constexpr const char* kName = #Name;                              \
    template <class F>                                                       \
    void visit(F&& f) const {                                                \
      FIELDS(KILN_CONFIG_VISIT_FIELD)                                        \
    }                                                                        \
    KILN_CONFIG_HOST_PART(Name)                                              \
  }
#else
#define KILN_CONFIG(Name, FIELDS)                                            \
  struct Name {                                                              \
    FIELDS(KILN_CONFIG_MEMBER)                                               \
  }
#endif

}  // namespace kiln
