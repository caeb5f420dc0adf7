// Random ANYmal contact problems built through the real Delassus pipeline (no simulation):
// a random configuration and velocity, CRBA + joint Jacobians + the implicit-PD M~ factored by
// ltdl_factor exactly as the stepper does, a ContactSet filled by hand (ground contacts with
// slightly tilted normals on the feet, the torso corners and along the shanks), then
// DelassusAssembler::assemble. G and c are copied out.
//
//   AnymalProblemBuilder b;  std::mt19937 rng(1);
//   AnymalProblem p = b.make(rng, AnymalProblemBuilder::kFeetAndTorso);   // 8 contacts
//   solver->solve(p.view(), lambda);
#pragma once

#include <memory>
#include <random>

#include "impulse/contact/contact_problem.hpp"
#include "impulse/contact/delassus.hpp"
#include "impulse/core/types.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/model/model.hpp"

namespace impulse::scenarios {

struct AnymalProblem {
  MatX G;
  VecX c, mu;
  Index nc = 0, nl = 0;
  ContactProblem view() const { return ContactProblem(G, c, mu, nc, nl); }
};

class AnymalProblemBuilder {
 public:
  static constexpr Index kFeet = 4;           // the four feet
  static constexpr Index kFeetAndTorso = 8;   // feet + the four lower torso corners

  AnymalProblemBuilder();
  ~AnymalProblemBuilder();
  const Model& model() const { return *model_; }

  // `contacts` contact points: first the 4 feet, then the 4 lower and 4 upper torso corners,
  // then points spread along the shanks and the torso (any count >= 1; 18 DOF whatever the
  // count). The base moves downwards (~0.3 m/s) so that most contacts close; mu ~ U(0.3, 1).
  AnymalProblem make(std::mt19937& rng, Index contacts);

  // Same configuration sampling, but c = -G lambda* for a random lambda* strictly inside the
  // friction cones (lambda*_z ~ U(0.5, 2) N s, |lambda*_T| <= 0.7 mu lambda*_z): every contact
  // sticks with v = 0 at lambda*, a solution of all four solver models (unique when G is regular).
  AnymalProblem make_sticking(std::mt19937& rng, Index contacts, VecX& lambda_star);

 private:
  void configure(std::mt19937& rng, Index contacts);
  std::unique_ptr<Model> model_;
  std::unique_ptr<Data> data_;
  DelassusAssembler assembler_;
  ContactSet contacts_;
  VecX q_, u_, u_free_;
};

}  // namespace impulse::scenarios
