// The field table of the contact model's settings (DelassusSettings; core/settings_field.hpp):
// validation (validate_contact_settings), the world file's <contact> attributes, the Python
// ContactSettings properties, its .pyi stub and the docs table come from these lines. Adding a
// setting: one line here.
#pragma once

#include "impulse/contact/delassus.hpp"
#include "impulse/core/settings_field.hpp"

namespace impulse {

template <>
struct EnumKeywords<RestitutionLaw> {
  static constexpr const char* name = "RestitutionLaw";
  static constexpr const char* noun = "restitution law";
  static constexpr FieldKeyword keywords[] = {{"poisson", static_cast<int>(RestitutionLaw::Poisson), "Poisson"},
                                              {"newton", static_cast<int>(RestitutionLaw::Newton), "Newton"}};
};

template <>
struct EnumKeywords<PositionCorrection> {
  static constexpr const char* name = "PositionCorrection";
  static constexpr const char* noun = "position correction";
  static constexpr FieldKeyword keywords[] = {{"velocity", static_cast<int>(PositionCorrection::Velocity), "Velocity"},
                                              {"split", static_cast<int>(PositionCorrection::Split), "Split"}};
};

template <>
struct EnumKeywords<PositionUpdate> {
  static constexpr const char* name = "PositionUpdate";
  static constexpr const char* noun = "position update";
  static constexpr FieldKeyword keywords[] = {{"euler", static_cast<int>(PositionUpdate::Euler), "Euler"},
                                              {"midpoint", static_cast<int>(PositionUpdate::Midpoint), "Midpoint"},
                                              {"bodies", static_cast<int>(PositionUpdate::Bodies), "Bodies"}};
};

inline const FieldTable<DelassusSettings>& contact_fields() {
  using D = DelassusSettings;
  static const FieldTable<D> t{
      "ContactSettings",
      "",
      {
          IMPULSE_FIELD(D, restitution_law, any_value(), "",
                        "impact law for e > 0: `poisson` (compression solve, then e times its impulse, bounded so that an impact never adds energy, then a correction solve) or `newton` (the target v_n+ >= e v_n-, with the same energy bound)",
                        "restitution"),
          IMPULSE_FIELD(D, position_correction, any_value(), "",
                        "`split`: a separate frictionless solve moves q only (adds no kinetic energy); `velocity`: the push-out velocity is a target of the contact solve and stays in u"),
          IMPULSE_FIELD(D, position_update, any_value(), "",
                        "how q moves in a step: `euler` (semi-implicit), `midpoint` (exact in free flight and single impacts) or `bodies` (midpoint for free rigid bodies, and for articulated systems without PD or damping in free flight; docs/fidelity.md item 7)"),
          IMPULSE_FIELD(D, flight_two_step, any_value(), "",
                        "free flight on the midpoint rule: the two-step velocity update from the last step's acceleration (one dynamics evaluation per step); false: Heun's update (a second evaluation at q+) every step"),
          IMPULSE_FIELD(D, restitution_threshold, at_least(0), "m/s", "slower approaches do not bounce"),
          IMPULSE_FIELD(D, erp, closed(0, 1), "", "fraction of the penetration removed per step (0: off)"),
          IMPULSE_FIELD(D, slop, at_least(0), "m", "penetration left uncorrected"),
          IMPULSE_FIELD(D, gap_slop, at_least(0), "m",
                        "a row apart closes its gap down to this (target v >= -max(gap - gap_slop, 0) / dt): bodies may rest this far above their support; 0: every gap is closed"),
          IMPULSE_FIELD(D, max_push_velocity, above(0), "m/s",
                        "bound on the push-out velocity of the position correction (rad/s on revolute limits): deep overlaps resolve at most this fast"),
          IMPULSE_FIELD(D, limit_margin, at_least(0), "m or rad", "joint-limit rows appear this close to a limit"),
          IMPULSE_FIELD(D, joint_limits, any_value(), "", "unilateral rows for finite joint position limits"),
          IMPULSE_FIELD(D, joint_friction, any_value(), "", "joint Coulomb friction (URDF `<dynamics friction>`) as an exact stick/slip row per joint"),
          IMPULSE_FIELD(D, mimic_joints, any_value(), "", "URDF `<mimic>` couplings q = m q_master + o as exact equality rows"),
      }};
  return t;
}

}  // namespace impulse
