// Python classes of the settings structs generated from their field tables
// (core/settings_field.hpp): one property per field, whose setter checks the field's range with
// the C++ message (InvalidArgument), and a field-by-field repr. The .pyi stubs come from the same
// tables (impulse settings --update).
#pragma once

#include <string>

#include "bindings.hpp"
#include "impulse/core/settings_field.hpp"

namespace impulse::python {

// The enum E as a Python enum with the members of its EnumKeywords.
template <class E>
py::enum_<E> bind_enum(py::module_& m, const char* doc = "") {
  py::enum_<E> e(m, EnumKeywords<E>::name, doc);
  for (const FieldKeyword& k : EnumKeywords<E>::keywords) e.value(k.name, static_cast<E>(k.value));
  return e;
}

// "sweeps over all contacts. In [1, 1e8]." (the property's docstring)
template <class S>
std::string field_docstring(const Field<S>& f) {
  std::string d = f.doc;
  if (f.kind == FieldKind::Real || f.kind == FieldKind::Integer) {
    d += ". Must be " + describe_range(f.kind, f.range, f.unit) + ".";
  } else if (*f.unit) {
    d += std::string(". Unit: ") + f.unit + ".";
  } else {
    d += ".";
  }
  return d;
}

// The properties of table t on class c (the enums of its Keyword fields must be bound in m
// already), and __repr__ "PgsSettings(max_iterations=10000, ...)".
template <class S>
void def_fields(py::module_& m, py::class_<S>& c, const FieldTable<S>& t) {
  for (const Field<S>& field : t.fields) {
    const Field<S>* f = &field;  // the tables are static
    const FieldTable<S>* table = &t;
    const py::handle enum_type = f->kind == FieldKind::Keyword ? m.attr(f->enum_name) : py::handle();
    auto get = [f, enum_type](const S& s) -> py::object {
      switch (f->kind) {
        case FieldKind::Integer: return py::int_(static_cast<long long>(f->get(s)));
        case FieldKind::Boolean: return py::bool_(f->get(s) != 0);
        case FieldKind::Keyword: return enum_type(static_cast<int>(f->get(s)));
        case FieldKind::Vector3: return py::cast(f->get3(s));
        default: return py::float_(f->get(s));
      }
    };
    auto set = [f, table, enum_type](S& s, const py::object& v) {
      auto wrong_type = [&](const char* expected) {
        throw py::type_error(std::string(table->python_name) + "." + f->name + ": expected " + expected + ", got " +
                             py::str(py::type::of(v).attr("__name__")).cast<std::string>());
      };
      // what pybind11's own casters accept (numpy scalars too), as def_readwrite did
      switch (f->kind) {
        case FieldKind::Real: {
          py::detail::make_caster<double> x;
          if (!x.load(v, true)) wrong_type("float");
          check_field_value(*table, *f, static_cast<double>(x));
          f->set(s, static_cast<double>(x));
          break;
        }
        case FieldKind::Integer: {
          // a long long for the range check (the bounds are at most 1e8); larger ints are out of range anyway
          py::detail::make_caster<long long> x;
          if (!x.load(v, true)) wrong_type("int");
          const double d = static_cast<double>(static_cast<long long>(x));
          check_field_value(*table, *f, d);
          f->set(s, d);
          break;
        }
        case FieldKind::Boolean: {
          py::detail::make_caster<bool> x;
          if (!x.load(v, true)) wrong_type("bool");
          f->set(s, static_cast<bool>(x) ? 1 : 0);
          break;
        }
        case FieldKind::Keyword:
          if (!py::isinstance(v, enum_type)) wrong_type(f->enum_name);
          f->set(s, v.attr("value").cast<int>());
          break;
        case FieldKind::Vector3: {
          py::detail::make_caster<Vec3> x;
          if (!x.load(v, true)) wrong_type("a 3-vector");
          check_field_value(*table, *f, static_cast<Vec3&>(x));
          f->set3(s, static_cast<Vec3&>(x));
          break;
        }
      }
    };
    c.def_property(f->name, get, set, field_docstring(*f).c_str());
  }
  c.def("__repr__", [table = &t](py::handle self) {
    std::string out = std::string(table->python_name) + "(";
    for (const Field<S>& f : table->fields) {
      out += (&f == &table->fields.front() ? "" : ", ") + std::string(f.name) + "=" +
             py::repr(self.attr(f.name)).template cast<std::string>();
    }
    return out + ")";
  });
}

// The table as a list of dicts (impulse.settings_fields): name, type ("float", "int", "bool" or
// the enum's name), lo, hi, lo_closed, hi_closed (None for an absent end), unit, doc, attribute.
template <class S>
py::list fields_info(const FieldTable<S>& t) {
  py::list out;
  for (const Field<S>& f : t.fields) {
    py::dict d;
    d["name"] = f.name;
    d["type"] = f.kind == FieldKind::Real      ? "float"
                : f.kind == FieldKind::Integer ? "int"
                : f.kind == FieldKind::Boolean ? "bool"
                                               : f.enum_name;
    const bool bounded = f.kind == FieldKind::Real || f.kind == FieldKind::Integer;
    d["lo"] = bounded && f.range.has_lo() ? py::object(py::float_(f.range.lo)) : py::none();
    d["hi"] = bounded && f.range.has_hi() ? py::object(py::float_(f.range.hi)) : py::none();
    d["lo_closed"] = f.range.lo_closed;
    d["hi_closed"] = f.range.hi_closed;
    d["unit"] = f.unit;
    d["doc"] = f.doc;
    d["attribute"] = f.attr();
    out.append(d);
  }
  return out;
}

}  // namespace impulse::python
