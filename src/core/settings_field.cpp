// Messages and descriptions of settings-field ranges (core/settings_field.hpp).
#include "impulse/core/settings_field.hpp"

#include <cstdio>
#include <cstdlib>

namespace impulse {

std::string format_value(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

std::string format_shortest(double x) {
  char buf[32];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof(buf), "%.*g", p, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  return buf;
}

std::string format_bound(double x) {
  // 100000000 reads as a count of zeros; 1e8 at a glance
  if (std::abs(x) >= 1e6 && x == std::floor(x)) {
    const double e = std::round(std::log10(std::abs(x)));
    if (std::pow(10.0, e) == std::abs(x)) return std::string(x < 0 ? "-" : "") + "1e" + format_value(e);
  }
  return format_value(x);
}

std::string describe_range(FieldKind kind, const FieldRange& r, const char* unit) {
  const std::string u = unit && *unit ? std::string(" ") + unit : std::string();
  switch (kind) {
    case FieldKind::Boolean: return "true or false";
    case FieldKind::Keyword: return "one of its keywords";
    case FieldKind::Vector3:
      return "finite with norm " + std::string(r.hi_closed ? "<= " : "< ") + format_bound(r.hi) + u;
    default: break;
  }
  const std::string finite = kind == FieldKind::Real ? "finite and " : "";
  if (r.has_lo() && r.has_hi()) {
    return "in " + std::string(r.lo_closed ? "[" : "(") + format_bound(r.lo) + ", " + format_bound(r.hi) +
           (r.hi_closed ? "]" : ")") + u;
  }
  if (r.has_lo()) return finite + (r.lo_closed ? ">= " : "> ") + format_bound(r.lo) + u;
  if (r.has_hi()) return finite + (r.hi_closed ? "<= " : "< ") + format_bound(r.hi) + u;
  return kind == FieldKind::Real ? "finite" + u : "an integer";
}

std::string field_error(const char* context, const char* name, FieldKind kind, const FieldRange& r, const char* unit,
                        const std::string& value) {
  return std::string(context) + name + " must be " + describe_range(kind, r, unit) + ", got " + value;
}

}  // namespace impulse
