// Contact problems sampled from the ANYmal scenarios, for solver benchmarks and tests.
//
// The scenario's World runs with a recording wrapper around its contact solver: at every sampled
// step the assembled problem (G, c, mu, nc, nl), the warm start the stepper handed to the solver
// and the simulation solver's answer are copied. The simulation itself is unchanged.
//
//   SampleOptions o;  o.steps = 3000;  o.every = 50;
//   for (const SampledProblem& p : sample_contact_problems("trot", o)) solver.solve(p.view(), l);
#pragma once

#include <string>
#include <vector>

#include "impulse/contact/contact_problem.hpp"
#include "impulse/core/types.hpp"

namespace impulse::scenarios {

struct SampledProblem {
  std::string scenario;
  long step = 0;    // index of the solve call in the run (steps without contacts or limits: no call)
  MatX G;
  VecX c, mu, box;  // box: bounds of the joint-friction rows
  Index nc = 0, nl = 0, nb = 0;
  VecX warm_start;  // what the stepper passed to the solver (last step's impulses)
  VecX solution;    // the simulation solver's answer
  ContactProblem view() const { return ContactProblem(G, c, mu, nc, nl, nb, box); }
};

struct SampleOptions {
  std::string solver = "bisection";  // solver that drives the simulation
  unsigned seed = 1;
  long steps = 2000;                 // simulated steps
  long every = 50;                   // keep every n-th step that has at least min_contacts contacts
  Index min_contacts = 1;
  long max_samples = 1000000;
};

std::vector<SampledProblem> sample_contact_problems(const std::string& scenario, const SampleOptions& options);

}  // namespace impulse::scenarios
