// BisectionLanes: the contact solve of a group of Worlds stepped together (batch::WorldLanes),
// the bisection solver's sweeps in SIMD lanes, one World per lane.
//
// The bisection solver (solvers/bisection.hpp; Hwangbo 2018, Algorithm 2) sweeps the contacts of
// an island one after another; W Worlds whose islands have the same number of contacts sweep in
// lockstep, contact i of every World at once (lanes_abi::bisection_sweep: the scalar sweep's
// operations in its order, so each lane's impulses and errors are its World's own bits). Each
// World keeps its own stopping decision (its SweepMonitor, its sweep count) and leaves the lanes
// when it stops; the relaxation factor decays the same in every lane, since all start together.
//
// What the lanes take is the solver's plain sweep with its single-contact cases, and a World
// whose solve would leave it is solved by its own solver from its warm start instead, World by
// World (the lanes' work on it is dropped, nothing of it is kept): so every World gets exactly
// the bits of its scalar solve. The lanes take a World's step when
//   - its contact solver is the bisection solver and its relaxation settings (alpha, gamma,
//     alpha_min) are the group's;
//   - its contact rows form one island, a dense G of nc >= 1 contacts, every one with friction
//     (mu > 0), without joint-limit or joint-friction rows;
//   - every diagonal block is well-conditioned (bisection_block_inverse: no regularization);
//   - its island has the group's largest contact count, and at least kMinLanes Worlds of the
//     group (both of a group of 2) take their steps (a sweep of fewer lanes, or of lanes padded
//     with contacts that do not touch, costs more than the Worlds' own sweeps);
// and keep it until it converges before the sweep at which Anderson mixing or the active-set
// stage would begin (anderson_start, active_set_start, or active_set_early on a crawl). A contact
// that slips stops the lanes' sweep at that contact: Algorithm 1 solves it for each World whose
// contact it is (solve_single_contact_inverted, the solver's own search), and the sweep resumes
// from that contact with its impulse. No allocation once the buffers have grown to the largest group.
#pragma once
#include <vector>

#include "impulse/core/types.hpp"
#include "impulse/solvers/solver_result.hpp"

namespace impulse {
class World;
}

namespace impulse::batch {

class BisectionLanes {
 public:
  // Solves island 0 of each World (after World::begin_solve returned true for it: bit w of
  // `begun`) that the lanes take, and hands the solution to its Stepper (set_presolved).
  // Returns the Worlds so solved (bit w: World w).
  unsigned solve(World* const* worlds, unsigned begun, int count, int width);

  static constexpr int kMinLanes = 3;

 private:
  std::vector<Scalar> G_, C_, MU_, MI_, LAM_, ll_, slip_;
};

}  // namespace impulse::batch
