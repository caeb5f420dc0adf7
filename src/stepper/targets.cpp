#include "impulse/stepper/targets.hpp"

#include <algorithm>
#include <cmath>

#include "../core/isa_dispatch.hpp"

namespace impulse {

namespace {

// Midpoint position update: the weight of a row's impulse in q+ (PositionUpdate). The part of
// the impulse that stops the approach the row had before the step (share rho = v- / v_free of
// the approach) acts at the time of impact tau = gap / -v- and moves q for dt - tau; the rest
// holds this step's smooth acceleration, a force spread over the step, weight 1/2. A resting
// contact (v- = 0) gets 1/2, an impact at the start of the step 1, one at its end 0.
// tau / dt: the first root of gap + v- t + a t^2 / 2 = 0 with a = (v_free - v-) / dt, in the
// cancellation-free form t = 2 gap / (-v- + sqrt(v-^2 - 2 a gap)); 1 when not reached.
Scalar impact_time(Scalar depth, Scalar v_before, Scalar v_free, Scalar dt) {
  const Scalar gap = -depth;
  if (gap <= 0) return Scalar(0);
  const Scalar a = (v_free - v_before) / dt, disc = v_before * v_before - 2 * a * gap;
  if (!(disc >= 0)) return Scalar(1);
  const Scalar den = -v_before + std::sqrt(disc);
  return den > 0 ? std::min(2 * gap / (den * dt), Scalar(1)) : Scalar(1);
}

// An impact is an approach that the row had before the step and that is large against this
// step's smooth change of velocity; a resting contact (v- ~ 0, or of the order of the change)
// is a continuous force, weight 1/2, on every row alike: rows of one body with different
// weights would move q off the constraint (J u_pos != 0 on a sticking contact).
bool is_impact(Scalar v_before, Scalar v_free) {
  return v_before < 0 && v_free < 0 && -v_before > 2 * std::abs(v_free - v_before);
}

// The weight, for one contact in the normal direction: the impulse stops the approach
// v_i = v- + a tau at tau (position effect (dt - tau) v_i), then holds the pull a for the rest
// of the step (a force over [tau, dt]: (dt - tau)^2 a / 2), so w = (1 - f)(1 + rho) / 2 with
// f = tau / dt and rho = v_i / v_free the impact's share. A bouncing row leaves the surface:
// all of its impulse is the impact's, w = 1 - f. A resting contact: f = 0, rho = 0, w = 1/2.
Scalar position_weight(Scalar f, Scalar v_before, Scalar v_free, bool bounces) {
  if (bounces) return 1 - f;
  const Scalar v_impact = v_before + (v_free - v_before) * f;
  const Scalar rho = v_impact < 0 && v_free < 0 ? std::min(v_impact / v_free, Scalar(1)) : Scalar(0);
  return (1 - f) * (1 + rho) / 2;
}

// Bounded push-out velocity of the position-error correction (DelassusSettings).
Scalar push_out(Scalar depth, Scalar dt, const DelassusSettings& st) {
  return std::min(st.erp * std::max(Scalar(0), depth - st.slop) / dt, st.max_push_velocity);
}

// Whether a normal or limit row is speculative: apart and not reached this step, neither the
// velocity before the step nor the free velocity after it (which moves q in semi-implicit Euler)
// closes the gap. With v_before alone, a row reached only because of this step's gravity impulse
// took a plastic speculative target and never bounced (a 1e-3 relative energy loss at 10 m/s).
bool speculative(Scalar gap, Scalar v_before, Scalar v_free, Scalar dt) {
  return gap > 0 && gap > -std::min(v_before, v_free) * dt;
}

// Inelastic target of a row reached this step. Euler: q moves with v+, so v+ >= -gap / dt ends
// the step on the surface. Midpoint (only islands whose reached row is an impact): its impulse
// moves q from the time of impact on (position_weight), so the inelastic target is v+ >= 0 and
// the body still ends on the surface. Then the velocity-level push-out (PositionCorrection::
// Velocity), only on penetrating rows: max(b, 0) on a row still apart would stop the body short
// of the surface, hovering at up to |v| dt above it, and every later approach again.
Scalar landing_target(Scalar depth, bool midpoint, Scalar dt, const DelassusSettings& st) {
  const Scalar gap = -depth;
  Scalar b = midpoint ? Scalar(0) : -std::max(gap, Scalar(0)) / dt;
  if (st.erp > 0 && st.position_correction == PositionCorrection::Velocity && depth > st.slop) {
    b = std::max(b, push_out(depth, dt, st));
  }
  return b;
}

}  // namespace

Scalar newton_target(Scalar e, Scalar v_before, Scalar v_free, Scalar f, bool midpoint, bool at_start) {
  // Euler: e times the approach velocity before the step (not the free velocity, which holds
  // this step's gravity impulse: v+ = -e v- keeps a ball's discrete energy exactly at e = 1).
  // Midpoint: e times the approach at the time of impact tau, v- + a tau, then the smooth
  // acceleration a = (v_free - v-) / dt for the rest of the step.
  Scalar b = -e * v_before;
  if (midpoint) b = -e * (v_before + (v_free - v_before) * f) + (v_free - v_before) * (1 - f);
  if (at_start) b = -e * v_before + (v_free - v_before);  // (the same at f = 0)
  return b;
}

void PositionUpdatePlan::reserve(Index num_systems) {
  system.assign(static_cast<std::size_t>(num_systems), 0);
  held.reserve(8);
  groups.reserve(8);
  num_midpoint = 0;
  any = false;
}

// A row that holds a body (a resting or sliding contact, a limit leaned on, joint friction) keeps
// its island on semi-implicit Euler, whose position update lands a body on the surface in one
// step and keeps q on a sticking contact (the midpoint update lags the velocity by half a step:
// contacts closed over several steps and squeezed grasps crept).
void plan_position_update(const DelassusAssembler& assembler, const std::vector<SystemView>& systems, Scalar dt,
                          PositionUpdatePlan& plan) {
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  plan.num_midpoint = 0;
  // (no system off Euler, e.g. robots only under Bodies: the Euler path, nothing computed)
  plan.any = false;
  for (const SystemView& sv : systems) plan.any = plan.any || !sv.euler;
  if (!plan.any) return;
  const std::size_t ni = static_cast<std::size_t>(assembler.num_islands());
  plan.held.assign(ni, 0);  // (capacity kept)
  plan.groups.assign(ni, 0);
  for (std::size_t k = 0; k < systems.size(); ++k) {
    const Index isl = assembler.system_island(static_cast<Index>(k));
    if (isl >= 0 && systems[k].euler) plan.held[static_cast<std::size_t>(isl)] = 1;
  }
  const RowArrays& a = assembler.row_arrays();
  for (const ConstraintRow& cr : assembler.rows()) {
    const Index sys = assembler.row_system(cr);
    if (sys < 0) continue;
    const std::size_t isl = static_cast<std::size_t>(assembler.system_island(sys));
    if (plan.held[isl]) continue;  // (on Euler already: a resting pile decides on its first rows)
    const Index r = cr.kind == ConstraintRow::Kind::Contact ? cr.row + 2 : cr.row;
    const Scalar gap = -a.depth[r];
    const bool reached = gap <= 0 || gap <= -std::min(a.v_before[r], a.c[r]) * dt;
    if (cr.kind == ConstraintRow::Kind::Friction || cr.kind == ConstraintRow::Kind::Mimic ||
        (reached && !is_impact(a.v_before[r], a.c[r])))
      plan.held[isl] = 1;
    unsigned char& gr = plan.groups[isl];
    gr = static_cast<unsigned char>((gr & 4) | (std::min(gr & 3, 1) + 1) | (reached ? 4 : 0));
  }
  for (std::size_t k = 0; k < systems.size(); ++k) {
    const Index isl = assembler.system_island(static_cast<Index>(k));
    if (isl < 0) continue;
    const int rows = plan.groups[static_cast<std::size_t>(isl)] & 3;
    const bool reached = (plan.groups[static_cast<std::size_t>(isl)] & 4) != 0;
    // Several contacts or limits in one island (a pile, a box landing on its corners) stay on
    // Euler too when one of them is reached: their impulses act at different times, and
    // per-row weights on one body move q off the contacts; a row not reached by the velocities
    // before the solve can be pushed into its surface by another row's impulse (a 216-ball pile
    // overlapped by 3 mm). One impact is placed exactly. An island whose rows are all
    // speculative (none reached: every target -gap/dt is met by the free motion, so lambda =
    // 0) moves as in free flight: balls falling in columns 1 cm apart were held on Euler by
    // the rows between them and drifted -m g^2 dt^2 / 2 per step.
    if (rows > 1 && reached) plan.held[static_cast<std::size_t>(isl)] = 1;
    // a system on the midpoint update in free flight only (Bodies: an articulated system, whose
    // flight takes Heun's velocity update in the stepper) holds its island on Euler once it
    // has a row
    if (systems[k].flight_only && rows > 0) plan.held[static_cast<std::size_t>(isl)] = 1;
  }
  for (std::size_t k = 0; k < systems.size(); ++k) {
    const Index isl = assembler.system_island(static_cast<Index>(k));
    // 2: no rows in its island (free flight), 1: one impact row, or speculative rows only
    unsigned char& m = plan.system[k];
    if (isl < 0) {
      m = systems[k].euler ? 0 : 2;
    } else {
      const std::size_t i = static_cast<std::size_t>(isl);
      m = plan.held[i] ? 0 : ((plan.groups[i] & 3) == 0 ? 2 : 1);
    }
    plan.num_midpoint += m != 0;
  }
  };
  return detail::run_kernel(kernel_body);
}

void targets_stage(DelassusAssembler& assembler, const std::vector<SystemView>& systems, Scalar dt,
                   const DelassusSettings& st, PositionUpdatePlan& plan) {
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  plan_position_update(assembler, systems, dt, plan);
  RowArrays& a = assembler.row_arrays();
  const Index n = assembler.num_rows();
  a.target.head(n).setZero();
  a.inelastic_target.head(n).setZero();
  a.bounce.head(n).setZero();
  a.position_target.head(n).setZero();
  if (plan.any) a.position_weight.head(n).setConstant(1);  // read only when weighted
  a.n_bounce = a.n_position = a.n_newton = a.n_speculative_elastic = 0;
  a.weighted = false;
  const bool split = st.erp > 0 && st.position_correction == PositionCorrection::Split;
  for (const ConstraintRow& cr : assembler.rows()) {
    if (cr.kind == ConstraintRow::Kind::Friction) continue;  // target 0, no bounce or push-out
    if (cr.kind == ConstraintRow::Kind::Mimic) {  // remove the coupling error, bounded
      const Scalar e = a.depth[cr.row];
      a.target[cr.row] = -std::clamp(st.erp * e / dt, -st.max_push_velocity, st.max_push_velocity);
      a.inelastic_target[cr.row] = a.target[cr.row];
      a.c[cr.row] -= a.target[cr.row];
      continue;
    }
    const Index r = cr.kind == ConstraintRow::Kind::Contact ? cr.row + 2 : cr.row;
    const Scalar depth = a.depth[r], v_before = a.v_before[r], v_free = a.c[r], e = a.restitution[r];
    // (Euler, the default, computes none of the midpoint data)
    bool midpoint = false;
    Scalar tau = 1;
    if (plan.num_midpoint > 0) {
      const Index sys = assembler.row_system(cr);
      midpoint = sys >= 0 && plan.system[static_cast<std::size_t>(sys)];
    }
    const bool bounces = e > 0 && -v_before > st.restitution_threshold;
    if (midpoint) {
      tau = impact_time(depth, v_before, v_free, dt);
      const Scalar w = position_weight(tau, v_before, v_free, bounces);
      a.position_weight.segment(cr.row, cr.kind == ConstraintRow::Kind::Contact ? 3 : 1).setConstant(w);
      a.weighted = a.weighted || w != 1;
    }
    a.impact_time[r] = tau;
    a.midpoint[static_cast<std::size_t>(r)] = midpoint;
    // An impact in an island on Euler, of a system that is not on Euler for good (PositionUpdate
    // Bodies or Midpoint: a free body between two flights on the midpoint update): the impulse
    // acts at the start of the step and the smooth acceleration after it, as q moves with v+ for
    // the whole step, so E = T + V is kept (the bounce -e v- alone keeps semi-implicit Euler's
    // shadow energy instead, which the midpoint flights around it do not: each bounce of a ball
    // in a pile added m g dt |v-|).
    bool at_start = false;
    if (!midpoint && plan.any && e > 0) {
      const Index sys = assembler.row_system(cr);
      at_start = sys >= 0 && !systems[static_cast<std::size_t>(sys)].euler;
    }
    a.at_start[static_cast<std::size_t>(r)] = at_start;
    const Scalar gap = -depth;
    const bool spec = speculative(gap, v_before, v_free, dt);
    // (the target closes the gap down to gap_slop: 0 below it, continuous above; speculative or
    // not stays the gap's, as for the position update's plan)
    const Scalar target_gap = gap > 0 ? std::max(gap - st.gap_slop, Scalar(0)) : gap;
    a.speculative[static_cast<std::size_t>(r)] = spec;
    a.bounce[r] = 0;
    Scalar b;
    if (spec) {  // may close the gap, not pass it; no restitution
      b = -target_gap / dt;
      a.inelastic_target[r] = b;
      a.n_speculative_elastic += e > 0;
    } else {
      b = landing_target(gap > 0 ? -target_gap : depth, midpoint, dt, st);
      a.inelastic_target[r] = b;
      if (bounces && st.restitution_law == RestitutionLaw::Newton) {
        const Scalar bounce_target = newton_target(e, v_before, v_free, tau, midpoint, at_start);
        if (bounce_target > b) ++a.n_newton;
        b = std::max(b, bounce_target);
      } else if (bounces) {  // Poisson: the impact happens in this step: compress fully (v_n+ >= 0),
                             // the stepper's restitution phase bounces after the solve
        a.bounce[r] = e;
        b = std::max(b, Scalar(0));
      }
    }
    a.target[r] = b;
    a.c[r] -= b;
    a.n_bounce += a.bounce[r] > 0;
    if (split && depth > st.slop) {
      a.position_target[r] = push_out(depth, dt, st);
      ++a.n_position;
    }
  }
  assembler.gather_rows();
  };
  return detail::run_kernel(kernel_body);
}

}  // namespace impulse
