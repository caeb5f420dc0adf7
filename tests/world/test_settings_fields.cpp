// The settings field tables (core/settings_field.hpp) and what is generated from them: every field
// of every table is read and written by world files (a non-default value round-trips), a value
// out of its range gives the table's message everywhere, and the committed .pyi stubs and docs
// tables are the generated text.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "impulse/contact/delassus_fields.hpp"
#include "impulse/solvers/solver_fields.hpp"
#include "impulse/solvers/solver_registry.hpp"
#include "impulse/world/settings_docs.hpp"
#include "impulse/world/world_fields.hpp"
#include "support/matchers.hpp"

using namespace impulse;
using impulse_test::source_path;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string parse_error(const std::string& xml) {
  try {
    parse_world_string(xml, "settings.xml");
  } catch (const WorldFileError& e) {
    return e.what();
  }
  return "";
}

// Values to try instead of field f's default d, in order.
template <class S>
std::vector<double> candidates(const Field<S>& f, double d) {
  switch (f.kind) {
    case FieldKind::Boolean: return {d != 0 ? 0.0 : 1.0};
    case FieldKind::Keyword: {
      std::vector<double> v;
      for (int i = 0; i < f.num_keywords; ++i) {
        if (f.keywords[i].value != d) v.push_back(f.keywords[i].value);
      }
      return v;
    }
    case FieldKind::Integer: return {d + 1, d - 1};
    default: return {d * 1.5, d * 0.5, d + 1, d + 0.25, 0.5};
  }
}

// One table of a WorldDescription: its fields, the element that holds them, and the struct.
template <class S, class Access>
void round_trip(const FieldTable<S>& t, const std::string& solver, Access access) {
  for (const Field<S>& f : t.fields) {
    INFO("field " << f.name);
    WorldDescription w;
    if (!solver.empty()) w.solver.name = solver;
    const S defaults = access(w);
    bool found = false;
    if (f.kind == FieldKind::Vector3) {
      f.set3(access(w), Vec3(1, -2, -3.25));
      found = true;
    } else {
      for (double v : candidates(f, f.get(defaults))) {
        if (v == f.get(defaults)) continue;  // (a default of 0 scales to itself)
        f.set(access(w), v);
        if (parse_error(world_settings_xml(w)).empty()) {
          found = true;
          break;
        }
      }
    }
    REQUIRE(found);  // some non-default value is accepted by the world file
    const std::string xml = world_settings_xml(w);
    INFO(xml);
    CHECK(contains(xml, std::string(" ") + f.attr() + "=\""));
    const WorldDescription back = parse_world_string(xml, "settings.xml");
    CHECK(field_text(f, access(back)) != field_text(f, defaults));
    for (const Field<S>& g : t.fields) CHECK(field_text(g, access(back)) == field_text(g, access(w)));
  }
}

// For each bounded real and integer field: a value just outside each end is rejected by the world
// file with the table's message. `element` wraps one attribute into a world file.
template <class S, class Wrap>
void out_of_range(const FieldTable<S>& t, Wrap wrap) {
  for (const Field<S>& f : t.fields) {
    if (f.kind != FieldKind::Real && f.kind != FieldKind::Integer) continue;
    std::vector<double> bad;
    if (f.range.has_lo()) bad.push_back(f.range.lo_closed ? f.range.lo - 1 : f.range.lo);
    if (f.range.has_hi()) bad.push_back(f.range.hi_closed ? f.range.hi + 1 : f.range.hi);
    for (double x : bad) {
      std::ostringstream text;
      text.precision(17);
      text << x;
      const std::string expected = field_error(t.context, f.name, f.kind, f.range, f.unit,
                                               f.kind == FieldKind::Integer ? text.str() : format_value(x));
      INFO(f.name << " = " << text.str());
      CHECK(contains(parse_error(wrap(f.attr(), text.str())), expected));
      CHECK_THROWS_WITH(check_field_value(t, f, x), expected);
    }
  }
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// "line N: committed '...', generated '...'" for the first line that differs, "" when none does.
std::string first_difference(const std::string& committed, const std::string& generated) {
  std::istringstream a(committed), b(generated);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la)), more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) return "";
    if (!more_a || !more_b || la != lb) {
      return "line " + std::to_string(line) + ": committed '" + (more_a ? la : "<end>") + "', generated '" +
             (more_b ? lb : "<end>") + "'";
    }
  }
}

}  // namespace

TEST_CASE("settings fields: every field round-trips through a world file", "[world][settings]") {
  round_trip(world_fields(), "", [](auto& w) -> auto& { return w; });
  round_trip(world_contact_fields(), "", [](auto& w) -> auto& { return w; });
  round_trip(contact_fields(), "", [](auto& w) -> auto& { return w.contact; });
  round_trip(bisection_fields(), "bisection", [](auto& w) -> auto& { return w.solver.bisection; });
  round_trip(pgs_fields(), "pgs", [](auto& w) -> auto& { return w.solver.pgs; });
  round_trip(lm_fields(), "lm", [](auto& w) -> auto& { return w.solver.lm; });
  round_trip(noslip_fields(), "noslip", [](auto& w) -> auto& { return w.solver.noslip; });
  // the defaults write nothing but the solver name
  CHECK(world_settings_xml(WorldDescription()) == "<world>\n  <solver name=\"bisection\"/>\n  <contact/>\n</world>\n");
}

TEST_CASE("settings fields: a value out of range gives the table's message", "[world][settings]") {
  const auto world = [](const char* a, const std::string& v) { return "<world " + std::string(a) + "=\"" + v + "\"/>"; };
  const auto contact = [](const char* a, const std::string& v) {
    return "<world><contact " + std::string(a) + "=\"" + v + "\"/></world>";
  };
  const auto solver = [](const char* name) {
    return [name](const char* a, const std::string& v) {
      return "<world><solver name=\"" + std::string(name) + "\" " + a + "=\"" + v + "\"/></world>";
    };
  };
  out_of_range(world_fields(), world);
  out_of_range(world_contact_fields(), contact);
  out_of_range(contact_fields(), contact);
  out_of_range(bisection_fields(), solver("bisection"));
  out_of_range(pgs_fields(), solver("pgs"));
  out_of_range(lm_fields(), solver("lm"));
  out_of_range(noslip_fields(), solver("noslip"));
  // the message of today's form, from the registry as from the file
  SolverSettings s;
  s.name = "pgs";
  s.pgs.alpha = 3;
  CHECK_THROWS_WITH(validate_solver_settings(s), "solver 'pgs': alpha must be in (0, 2], got 3");
  CHECK(contains(parse_error(solver("pgs")("alpha", "3")), "settings.xml:1: <solver>: solver 'pgs': alpha must be in (0, 2], got 3"));
  CHECK(contains(parse_error(world("gravity", "0 0 -1e5")),
                 "<world>: gravity must be finite with norm <= 10000 m/s^2, got (0 0 -100000)"));
  CHECK(contains(parse_error(solver("lm")("max_iterations", "2.5")), "attribute 'max_iterations': '2.5' is not an integer"));
  CHECK(contains(parse_error(solver("lm")("max_iterations", "99999999999999999999")),
                 "solver 'lm': max_iterations must be in [1, 1e8], got 1e+20"));
}

TEST_CASE("settings fields: stall_window 0 never stops on a plateau, a negative one is an error", "[world][settings]") {
  for (const char* name : {"bisection", "pgs"}) {
    SolverSettings s;
    s.name = name;
    s.bisection.stall_window = 0;
    s.pgs.stall_window = 0;
    CHECK_NOTHROW(validate_solver_settings(s));
    s.bisection.stall_window = -1;
    s.pgs.stall_window = -1;
    CHECK_THROWS_WITH(validate_solver_settings(s),
                      "solver '" + std::string(name) + "': stall_window must be in [0, 1e8], got -1");
  }
}

TEST_CASE("settings fields: the world file takes slip_model, illinois and stall_window", "[world][settings]") {
  const WorldDescription w = parse_world_string(
      "<world><solver name=\"bisection\" slip_model=\"minimum_energy\" illinois=\"false\" stall_window=\"0\"/></world>",
      "bisection.xml");
  CHECK(w.solver.bisection.slip_model == SlipModel::MinimumEnergy);
  CHECK(!w.solver.bisection.illinois);
  CHECK(w.solver.bisection.stall_window == 0);
  CHECK(parse_world_string("<world><solver name=\"pgs\" stall_window=\"7\"/></world>", "pgs.xml").solver.pgs.stall_window == 7);
  CHECK(contains(parse_error("<world><solver name=\"bisection\" slip_model=\"stribeck\"/></world>"),
                 "attribute 'slip_model': unknown slip model 'stribeck' (valid: coulomb, minimum_energy)"));
}

TEST_CASE("settings fields: one setting from ELEMENT.ATTRIBUTE=VALUE (impulse run --set)", "[world][settings]") {
  WorldDescription d = parse_world_string("<world dt=\"0.002\"><solver name=\"pgs\" alpha=\"0.5\"/></world>", "w.xml");
  apply_world_setting(d, "solver.stall_window=0");
  apply_world_setting(d, "contact.restitution=newton");
  apply_world_setting(d, "world.gravity=0 0 -1.62");
  CHECK(d.solver.name == "pgs");
  CHECK(d.solver.pgs.stall_window == 0);
  CHECK(d.solver.pgs.alpha == 0.5);  // the rest is kept
  CHECK(d.dt == 0.002);
  CHECK(d.contact.restitution_law == RestitutionLaw::Newton);
  CHECK(d.gravity == Vec3(0, 0, -1.62));
  const auto error = [&](const std::string& a) {
    try {
      apply_world_setting(d, a);
    } catch (const WorldFileError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error("solver.alpha=3") == "--set solver.alpha=3: <solver>: solver 'pgs': alpha must be in (0, 2], got 3");
  CHECK(error("solver.gamma=0.5") ==
        "--set solver.gamma=0.5: <solver>: unknown attribute 'gamma' (valid: name, max_iterations, tolerance, alpha, "
        "stall_window, anderson_memory, anderson_start)");
  CHECK(contains(error("solver.name=lm"), "the solver is chosen by --solver"));
  CHECK(contains(error("robot.x=1"), "unknown element 'robot' (valid: world, solver, contact)"));
  CHECK(contains(error("dt=0.1"), "expected ELEMENT.ATTRIBUTE=VALUE"));
  CHECK(d.solver.pgs.alpha == 0.5);  // unchanged by the errors
}

TEST_CASE("settings fields: the committed stubs and docs tables are the generated ones", "[world][settings]") {
  for (const std::string& file : generated_settings_files()) {
    const std::string text = read(source_path(file));
    INFO(file << " differs from the settings field tables: regenerate it with `build/bin/impulse settings --update` "
                 "(from the source tree)");
    CHECK(first_difference(text, update_generated_blocks(text, file)) == "");
  }
  // every field with its range in the docs
  const std::string docs = read(source_path("docs/world-format.md"));
  const auto listed = [&](const auto& t) {
    for (const auto& f : t.fields) {
      INFO(f.name);
      CHECK(contains(docs, "| `" + std::string(f.attr()) + "` |"));
    }
  };
  listed(world_fields());
  listed(world_contact_fields());
  listed(contact_fields());
  listed(bisection_fields());
  listed(pgs_fields());
  listed(lm_fields());
  listed(noslip_fields());
  CHECK(contains(docs, "| `alpha` | real | 0.6 | (0, 2] |  | step factor of eq. 18 |"));
  CHECK(contains(docs, "| `stall_window` | integer | 20 | [0, 1e8] |"));
}
