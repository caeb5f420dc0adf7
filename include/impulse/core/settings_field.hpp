// Field tables of the settings structs: one line per setting (name, member, type, range, unit,
// one-line meaning) from which everything that handles the setting is derived: the range checks
// and their messages (validate_fields), the world file's attributes (read and written, world
// files), the Python properties and their .pyi stubs, and the tables of docs/world-format.md
// (impulse settings --update). The defaults are read from a default-constructed struct, so the
// initializer in the struct's declaration stays the one place that sets them.
//
// Adding a setting: the member in its struct, one line in its table (solvers/solver_fields.hpp,
// contact/delassus_fields.hpp, world/world_fields.hpp), then `impulse settings --update` to
// regenerate the stubs and the docs (a test fails until they match).
#pragma once

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "impulse/core/error.hpp"
#include "impulse/core/types.hpp"

namespace impulse {

enum class FieldKind {
  Real,     // Scalar
  Integer,  // Index
  Boolean,  // bool
  Keyword,  // an enum, written as one of its keywords
  Vector3,  // Vec3; the range bounds its norm
};

// One enumerator: its keyword in world files and docs, its value, its Python/C++ name.
struct FieldKeyword {
  const char* keyword;
  int value;
  const char* name;
};

// Specialised for each enum used by a settings field: the enum's name (Python and C++), a noun
// for messages ("position update") and its keywords in documentation order.
template <class E>
struct EnumKeywords;

// The accepted values: lo < x < hi, with either end closed (<=) or absent (infinite). Reals must
// also be finite.
struct FieldRange {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_closed = true, hi_closed = true;

  bool contains(double x) const {
    if (std::isnan(x)) return false;
    const bool above = lo_closed ? x >= lo : x > lo;
    const bool below = hi_closed ? x <= hi : x < hi;
    return above && below;
  }
  bool has_lo() const { return std::isfinite(lo); }
  bool has_hi() const { return std::isfinite(hi); }
};
// [lo, hi], (lo, hi], [lo, hi), (lo, hi), [lo, inf), (lo, inf), anything
constexpr FieldRange closed(double lo, double hi) { return {lo, hi, true, true}; }
constexpr FieldRange open_closed(double lo, double hi) { return {lo, hi, false, true}; }
constexpr FieldRange closed_open(double lo, double hi) { return {lo, hi, true, false}; }
constexpr FieldRange open(double lo, double hi) { return {lo, hi, false, false}; }
constexpr FieldRange at_least(double lo) { return {lo, std::numeric_limits<double>::infinity(), true, false}; }
constexpr FieldRange above(double lo) { return {lo, std::numeric_limits<double>::infinity(), false, false}; }
constexpr FieldRange any_value() { return {}; }
// Integer counts are at most 1e8 (an iteration cap beyond that is a typo, not a setting).
constexpr double kMaxCount = 1e8;
constexpr FieldRange count_from(double lo) { return closed(lo, kMaxCount); }

template <class S>
struct Field {
  const char* name = "";  // the member's name: also the Python property and the world-file attribute
  FieldKind kind = FieldKind::Real;
  FieldRange range;
  const char* unit = "";  // SI unit ("" when dimensionless)
  const char* doc = "";   // one line
  const char* attribute = nullptr;  // world-file attribute when it differs from name
  // Keyword fields: the enum's keywords
  const char* enum_name = nullptr;
  const char* enum_noun = nullptr;
  const FieldKeyword* keywords = nullptr;
  int num_keywords = 0;
  // Real, Integer, Boolean (0, 1) and Keyword (the enumerator's value) fields
  double (*get)(const S&) = nullptr;
  void (*set)(S&, double) = nullptr;
  // Vector3 fields
  Vec3 (*get3)(const S&) = nullptr;
  void (*set3)(S&, const Vec3&) = nullptr;

  const char* attr() const { return attribute ? attribute : name; }
  // The keyword of enumerator value v, nullptr when none has it.
  const char* keyword_of(int v) const {
    for (int i = 0; i < num_keywords; ++i) {
      if (keywords[i].value == v) return keywords[i].keyword;
    }
    return nullptr;
  }
};

// A settings struct's fields, in declaration order. `context` prefixes every message
// ("solver 'pgs': "); python_name is the struct's Python class.
template <class S>
struct FieldTable {
  const char* python_name;
  const char* context;
  std::vector<Field<S>> fields;

  const Field<S>* find(const std::string& name) const {
    for (const Field<S>& f : fields) {
      if (name == f.name) return &f;
    }
    return nullptr;
  }
};

namespace detail {

template <class M>
struct MemberOf;
template <class S, class T>
struct MemberOf<T S::*> {
  using Struct = S;
  using Type = T;
};

}  // namespace detail

// The descriptor of member M (IMPULSE_FIELD names it once).
template <auto M>
Field<typename detail::MemberOf<decltype(M)>::Struct> make_field(const char* name, FieldRange range, const char* unit,
                                                                  const char* doc, const char* attribute = nullptr) {
  using S = typename detail::MemberOf<decltype(M)>::Struct;
  using T = typename detail::MemberOf<decltype(M)>::Type;
  Field<S> f;
  f.name = name;
  f.range = range;
  f.unit = unit;
  f.doc = doc;
  f.attribute = attribute;
  if constexpr (std::is_same_v<T, bool>) {
    f.kind = FieldKind::Boolean;
    f.get = [](const S& s) { return s.*M ? 1.0 : 0.0; };
    f.set = [](S& s, double v) { s.*M = v != 0; };
  } else if constexpr (std::is_enum_v<T>) {
    f.kind = FieldKind::Keyword;
    f.enum_name = EnumKeywords<T>::name;
    f.enum_noun = EnumKeywords<T>::noun;
    f.keywords = EnumKeywords<T>::keywords;
    f.num_keywords = static_cast<int>(std::extent_v<decltype(EnumKeywords<T>::keywords)>);
    f.get = [](const S& s) { return static_cast<double>(static_cast<int>(s.*M)); };
    f.set = [](S& s, double v) { s.*M = static_cast<T>(static_cast<int>(v)); };
  } else if constexpr (std::is_integral_v<T>) {
    f.kind = FieldKind::Integer;
    f.get = [](const S& s) { return static_cast<double>(s.*M); };
    f.set = [](S& s, double v) { s.*M = static_cast<T>(v); };
  } else if constexpr (std::is_floating_point_v<T>) {
    f.kind = FieldKind::Real;
    f.get = [](const S& s) { return static_cast<double>(s.*M); };
    f.set = [](S& s, double v) { s.*M = static_cast<T>(v); };
  } else {
    static_assert(std::is_same_v<T, Vec3>, "settings fields are Scalar, Index, bool, an enum or Vec3");
    f.kind = FieldKind::Vector3;
    f.get3 = [](const S& s) { return Vec3(s.*M); };
    f.set3 = [](S& s, const Vec3& v) { s.*M = v; };
  }
  return f;
}

#define IMPULSE_FIELD(Struct, member, ...) ::impulse::make_field<&Struct::member>(#member, __VA_ARGS__)

// "in (0, 2]", "finite and >= 0", "one of newton, poisson": what the range accepts, for
// messages and docs (bounds written as 1e8, not 100000000).
std::string format_bound(double x);
std::string describe_range(FieldKind kind, const FieldRange& r, const char* unit);
// The message for value x out of the field's range:
// "<context><name> must be <range>[ unit], got <x>".
std::string field_error(const char* context, const char* name, FieldKind kind, const FieldRange& r, const char* unit,
                        const std::string& value);
std::string format_value(double x);

// The shortest decimal text that reads back as x (at most 17 significant digits).
std::string format_shortest(double x);

// The world-file text of field f of s: a decimal number, "x y z", true/false or the keyword.
template <class S>
std::string field_text(const Field<S>& f, const S& s) {
  if (f.kind == FieldKind::Vector3) {
    const Vec3 v = f.get3(s);
    return format_shortest(v.x()) + " " + format_shortest(v.y()) + " " + format_shortest(v.z());
  }
  const double v = f.get(s);
  switch (f.kind) {
    case FieldKind::Integer: return std::to_string(static_cast<long long>(v));
    case FieldKind::Boolean: return v != 0 ? "true" : "false";
    case FieldKind::Keyword: {
      const char* k = f.keyword_of(static_cast<int>(v));
      return k ? k : std::to_string(static_cast<int>(v));
    }
    default: return format_shortest(v);
  }
}

// Throws InvalidArgument when v (the value to be stored in field f) is out of its range.
template <class S>
void check_field_value(const FieldTable<S>& t, const Field<S>& f, double v) {
  bool ok = f.range.contains(v);
  if (f.kind == FieldKind::Integer) ok = ok && v == std::floor(v);
  if (f.kind == FieldKind::Keyword) ok = f.keyword_of(static_cast<int>(v)) != nullptr && v == std::floor(v);
  if (f.kind == FieldKind::Boolean) ok = v == 0 || v == 1;
  if (!ok) {
    // counts as integers (1000000, not 1e+06)
    const bool whole = f.kind == FieldKind::Integer && v == std::floor(v) && std::abs(v) < 1e18;
    const std::string text = whole ? std::to_string(static_cast<long long>(v)) : format_value(v);
    throw InvalidArgument(field_error(t.context, f.name, f.kind, f.range, f.unit, text));
  }
}
template <class S>
void check_field_value(const FieldTable<S>& t, const Field<S>& f, const Vec3& v) {
  if (!v.allFinite() || !f.range.contains(v.norm())) {
    std::ostringstream os;
    os << "(" << v.x() << " " << v.y() << " " << v.z() << ")";
    throw InvalidArgument(field_error(t.context, f.name, f.kind, f.range, f.unit, os.str()));
  }
}
template <class S>
void check_field(const FieldTable<S>& t, const Field<S>& f, const S& s) {
  if (f.kind == FieldKind::Vector3) {
    check_field_value(t, f, f.get3(s));
  } else {
    check_field_value(t, f, f.get(s));
  }
}
// Checks every field of s in table order (the first one out of range throws).
template <class S>
void validate_fields(const FieldTable<S>& t, const S& s) {
  for (const Field<S>& f : t.fields) check_field(t, f, s);
}

}  // namespace impulse
