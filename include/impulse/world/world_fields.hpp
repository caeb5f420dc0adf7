// The field tables of the World-level settings (core/settings_field.hpp), over the world file's
// WorldDescription: the <world> element's attributes (time step, gravity, stage timing) and the
// World-level attributes of <contact> (margin, contact cap; the contact model's own settings are
// contact/delassus_fields.hpp). The checks of settings.hpp (World::set_time_step, ...), the world
// file and the docs tables come from these lines. Adding a setting: one line here, a member of
// WorldDescription and its use in build_world.
#pragma once

#include "impulse/core/settings_field.hpp"
#include "impulse/world/settings.hpp"
#include "impulse/world/world_file.hpp"

namespace impulse {

// <world dt gravity stage_timing>
inline const FieldTable<WorldDescription>& world_fields() {
  using W = WorldDescription;
  static const FieldTable<W> t{
      "World",
      "",
      {
          IMPULSE_FIELD(W, dt, closed(kMinTimeStep, kMaxTimeStep), "s",
                        "time step (above 0.1 s the semi-implicit integration of a robot is meaningless, below 1e-7 s increments lose their digits)"),
          IMPULSE_FIELD(W, gravity, closed(0, 1e4), "m/s^2", "gravitational acceleration"),
          IMPULSE_FIELD(W, stage_timing, any_value(), "", "measure each step's stage times (7 clock reads per step)"),
      }};
  return t;
}

// <contact margin max_contacts>
inline const FieldTable<WorldDescription>& world_contact_fields() {
  using W = WorldDescription;
  static const FieldTable<W> t{
      "World",
      "",
      {
          IMPULSE_FIELD(W, margin, closed(0, kMaxContactMargin), "m", "contact margin: pairs closer than this are reported (depth < 0)"),
          IMPULSE_FIELD(W, max_contacts, closed(1, kMaxContactsLimit), "",
                        "safety cap of the contact set (storage grows with use); the extra contacts are dropped and counted"),
      }};
  return t;
}

}  // namespace impulse
