// Python stubs and docs tables generated from the settings field tables (settings_docs.hpp).
#include "impulse/world/settings_docs.hpp"

#include <sstream>

#include "impulse/contact/delassus_fields.hpp"
#include "impulse/core/error.hpp"
#include "impulse/solvers/solver_fields.hpp"
#include "impulse/world/world_fields.hpp"

namespace impulse {

namespace {

const char* const kPyi = "python/impulse/_impulse.pyi";
const char* const kWorldFormat = "docs/world-format.md";

template <class S>
std::string python_type(const Field<S>& f) {
  switch (f.kind) {
    case FieldKind::Real: return "float";
    case FieldKind::Integer: return "int";
    case FieldKind::Boolean: return "bool";
    case FieldKind::Keyword: return f.enum_name;
    case FieldKind::Vector3: return "FloatArray";
  }
  return "";
}

// "(0, 2]", ">= 0", "any"; keywords and booleans listed
template <class S>
std::string range_text(const Field<S>& f) {
  const FieldRange& r = f.range;
  switch (f.kind) {
    case FieldKind::Boolean: return "`true`, `false`";
    case FieldKind::Keyword: {
      std::string out;
      for (int i = 0; i < f.num_keywords; ++i) out += (i ? ", `" : "`") + std::string(f.keywords[i].keyword) + "`";
      return out;
    }
    case FieldKind::Vector3: return std::string("norm ") + (r.hi_closed ? "<= " : "< ") + format_bound(r.hi);
    default: break;
  }
  if (r.has_lo() && r.has_hi()) {
    return std::string(r.lo_closed ? "[" : "(") + format_bound(r.lo) + ", " + format_bound(r.hi) + (r.hi_closed ? "]" : ")");
  }
  if (r.has_lo()) return (r.lo_closed ? ">= " : "> ") + format_bound(r.lo);
  if (r.has_hi()) return (r.hi_closed ? "<= " : "< ") + format_bound(r.hi);
  return "any";
}

template <class S>
std::string type_text(const Field<S>& f) {
  switch (f.kind) {
    case FieldKind::Real: return "real";
    case FieldKind::Integer: return "integer";
    case FieldKind::Boolean: return "boolean";
    case FieldKind::Keyword: return "keyword";
    case FieldKind::Vector3: return "3 reals";
  }
  return "";
}

std::string escape_pipes(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

// | attribute | type | default | range | unit | meaning |
template <class S>
void markdown_rows(std::ostream& os, const FieldTable<S>& t) {
  const S d{};
  for (const Field<S>& f : t.fields) {
    os << "| `" << f.attr() << "` | " << type_text(f) << " | " << field_text(f, d) << " | " << range_text(f) << " | "
       << f.unit << " | " << escape_pipes(f.doc);
    if (f.attribute) os << " (C++ and Python: `" << f.name << "`)";
    os << " |\n";
  }
}
const char* const kHeader = "| attribute | type | default | range | unit | meaning |\n| --- | --- | --- | --- | --- | --- |\n";

template <class S>
std::string markdown_table(const FieldTable<S>& t) {
  std::ostringstream os;
  os << kHeader;
  markdown_rows(os, t);
  return os.str();
}

template <class E>
void python_enum(std::ostream& os) {
  os << "class " << EnumKeywords<E>::name << "(enum.Enum):\n";
  for (const FieldKeyword& k : EnumKeywords<E>::keywords) os << "    " << k.name << " = ...\n";
  os << "\n";
}

template <class S>
void python_class(std::ostream& os, const FieldTable<S>& t) {
  os << "class " << t.python_name << ":\n";
  for (const Field<S>& f : t.fields) {
    os << "    " << f.name << ": " << python_type(f);
    if (f.kind == FieldKind::Real || f.kind == FieldKind::Integer) {
      os << "  # " << range_text(f) << (*f.unit ? std::string(" ") + f.unit : std::string());
    } else if (*f.unit) {
      os << "  # " << f.unit;
    }
    os << "\n";
  }
  os << "    def __init__(self) -> None: ...\n";
}

template <class... E, class S>
GeneratedBlock python_block(const FieldTable<S>& t) {
  std::ostringstream os;
  (python_enum<E>(os), ...);
  python_class(os, t);
  return {kPyi, t.python_name, os.str()};
}

std::string begin_marker(const std::string& file, const std::string& name) {
  const std::string m = "BEGIN generated: " + name + " (impulse settings --update)";
  return file.size() > 3 && file.compare(file.size() - 3, 3, ".md") == 0 ? "<!-- " + m + " -->" : "# " + m;
}
std::string end_marker(const std::string& file, const std::string& name) {
  const std::string m = "END generated: " + name;
  return file.size() > 3 && file.compare(file.size() - 3, 3, ".md") == 0 ? "<!-- " + m + " -->" : "# " + m;
}

}  // namespace

std::vector<GeneratedBlock> generated_settings_blocks() {
  std::vector<GeneratedBlock> b;
  b.push_back(python_block<SlipModel>(bisection_fields()));
  b.push_back(python_block<>(pgs_fields()));
  b.push_back(python_block<LmVariant>(lm_fields()));
  b.push_back(python_block<>(noslip_fields()));
  b.push_back(python_block<RestitutionLaw, PositionCorrection, PositionUpdate>(contact_fields()));
  {
    std::ostringstream os;
    os << kHeader;
    markdown_rows(os, world_fields());
    b.push_back({kWorldFormat, "world", os.str()});
  }
  {
    std::ostringstream os;
    os << kHeader;
    markdown_rows(os, world_contact_fields());
    markdown_rows(os, contact_fields());
    b.push_back({kWorldFormat, "contact", os.str()});
  }
  b.push_back({kWorldFormat, "solver bisection", markdown_table(bisection_fields())});
  b.push_back({kWorldFormat, "solver pgs", markdown_table(pgs_fields())});
  b.push_back({kWorldFormat, "solver lm", markdown_table(lm_fields())});
  b.push_back({kWorldFormat, "solver noslip", markdown_table(noslip_fields())});
  return b;
}

std::vector<std::string> generated_settings_files() { return {kPyi, kWorldFormat}; }

std::string update_generated_blocks(const std::string& text, const std::string& file) {
  std::string out = text;
  for (const GeneratedBlock& b : generated_settings_blocks()) {
    if (b.file != file) continue;
    const std::string begin = begin_marker(file, b.name) + "\n", end = end_marker(file, b.name) + "\n";
    const std::size_t i = out.find(begin);
    const std::size_t j = i == std::string::npos ? i : out.find(end, i);
    if (j == std::string::npos) {
      throw Error(file + ": no generated block '" + b.name + "' (the lines '" + begin_marker(file, b.name) + "' and '" +
                  end_marker(file, b.name) + "')");
    }
    out.replace(i + begin.size(), j - i - begin.size(), b.text);
  }
  return out;
}

}  // namespace impulse
