// The targets stage of a step (docs/architecture.md, "One step, stage by stage"): after the
// constraint rows (DelassusAssembler::assemble), and before the solve, it decides how each system
// moves q this step and gives every row its target b, folded into c = J u_free - b (RowArrays).
//
//   plan_position_update()  per island: semi-implicit Euler, or the midpoint rule (free flight,
//                           one impact, speculative rows only; PositionUpdate, stepper.hpp)
//   targets_stage()         per row, with the plan: the time of impact and the position weight
//                           (midpoint islands), the speculative target -gap/dt, the landing
//                           target, the push-out velocity (PositionCorrection), the restitution
//                           term of the law (newton_target(), or the Poisson flag), then
//                           DelassusAssembler::gather_rows() hands the rows to the islands
//
// Targets (per normal or limit row, signed distance d = -depth, positive while apart):
//   apart and not reached this step (d > -min(v_n-, v_n,free) dt):
//                                                     b = -d / dt   (may close the gap, not pass it)
//   otherwise:  b = max(e v_approach   [Newton restitution, when v_approach > threshold],
//                       min(erp max(0, depth - slop) / dt, max_push_velocity)
//                                                         [position-error correction, bounded,
//                                                          PositionCorrection::Velocity],
//                       -max(d, 0) / dt                   [Euler: land on the surface; 0 on
//                                                          the midpoint rule])
// with v_approach = -v_n- = -J_n u (the normal velocity before the step). Under the Poisson
// restitution law (the default) the e v_approach term is left out and the row is flagged instead
// (RowArrays::bounce = e, b = max(b, 0): the impact happens within this step, so the first solve
// compresses fully); the stepper adds the restitution impulse after the solve (stepper.hpp).
// Mimic rows remove the coupling error e at erp e / dt, bounded by max_push_velocity; joint
// friction rows have target 0 (stick).
#pragma once

#include <vector>

#include "impulse/contact/delassus.hpp"

namespace impulse {

// How each system moves q in this step (the targets stage's decision; PositionUpdate).
struct PositionUpdatePlan {
  // per system: 0 semi-implicit Euler, 1 the midpoint rule (its island has one impact row, or
  // speculative rows only), 2 the midpoint rule in free flight (no rows)
  std::vector<unsigned char> system;
  Index num_midpoint = 0;  // systems with system[s] != 0
  bool any = false;        // some system may leave Euler (SystemView::euler false)
  // scratch, per island: held on Euler; its rows counted to 2 (bits 0-1), | 4 if one is reached
  std::vector<unsigned char> held, groups;

  bool midpoint(Index s) const { return num_midpoint > 0 && system[static_cast<std::size_t>(s)] != 0; }
  bool flight(Index s) const { return num_midpoint > 0 && system[static_cast<std::size_t>(s)] == 2; }
  void reserve(Index num_systems);
};

// Which islands move q at the midpoint: those without rows (free flight) or with a single
// contact or limit that is an impact or not reached; every system with SystemView::euler, and
// every island with such a system, stays on Euler. Reads the rows of the last assemble().
void plan_position_update(const DelassusAssembler& assembler, const std::vector<SystemView>& systems, Scalar dt,
                          PositionUpdatePlan& plan);

// Newton's law: the target of a bouncing row, e times the approach velocity (Euler), or at the
// time of impact tau = f dt followed by the step's smooth acceleration (midpoint rule), or with
// the impact at the start of the step (at_start).
Scalar newton_target(Scalar e, Scalar v_before, Scalar v_free, Scalar f, bool midpoint, bool at_start);

// The targets stage: plan_position_update, then every row's target and the RowArrays of the
// targets (the header above), then assembler.gather_rows(). After it the islands' problems are
// complete.
void targets_stage(DelassusAssembler& assembler, const std::vector<SystemView>& systems, Scalar dt,
                   const DelassusSettings& settings, PositionUpdatePlan& plan);

}  // namespace impulse
