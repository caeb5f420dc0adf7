// Settings validation shared by the World, the world-file parser and the CLI (settings.hpp): the
// checks and messages of the field tables (world/world_fields.hpp, contact/delassus_fields.hpp).
#include "impulse/world/settings.hpp"

#include <cmath>

#include "impulse/contact/delassus_fields.hpp"
#include "impulse/core/check.hpp"
#include "impulse/world/world_fields.hpp"

namespace impulse {

namespace {

template <class T>
void check(const FieldTable<WorldDescription>& t, const char* name, const T& value) {
  check_field_value(t, *t.find(name), value);
}

}  // namespace

void validate_time_step(Scalar dt) { check(world_fields(), "dt", dt); }

void validate_time(Scalar t) {
  IMPULSE_CHECK(std::isfinite(t) && t >= 0, "time must be finite and >= 0 s, got ", t);
}

void validate_gravity(const Vec3& g) { check(world_fields(), "gravity", g); }

void validate_contact_margin(Scalar margin) { check(world_contact_fields(), "margin", margin); }

void validate_contact_settings(const DelassusSettings& s) { validate_fields(contact_fields(), s); }

void validate_max_contacts(Index n) { check(world_contact_fields(), "max_contacts", static_cast<double>(n)); }

}  // namespace impulse
