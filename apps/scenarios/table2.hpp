// Table II and Fig. 6 of Hwangbo, Lee, Hutter, RA-L 2018 (sec. V-C), on our engine:
//
//   Table II  seconds per 100k steps of trot, hang, drop and random with bisection and with PGS.
//             Ours is the engine's own time (the sum of the stepper's stage timers: dynamics,
//             collision, Delassus, solve, integrate), without controller or logging, like the
//             paper's run "without logging".
//   Fig. 6    while simulating with bisection, every `fig6_every`-th contact problem (the
//             assembled G, c, mu before the solve) is copied and solved again from zero by
//             bisection (default settings) and by PGS run to tolerance 1e-20; per contact the
//             relative difference |lambda_b - lambda_p| / |lambda_p| goes into a histogram.
//             The two solvers solve different models: bisection Hwangbo's eq. 8 (energy minimum on
//             the conic section v_z = 0), PGS Coulomb's law eq. 6. They coincide when no contact
//             of the problem slips (the sticking impulse, v = 0, solves both) and genuinely differ
//             at slipping contacts of legs whose G_ii couples normal and tangential directions. So
//             besides the paper's all-contacts fraction, the fraction within 1 % is reported on the
//             contacts of problems whose Coulomb (PGS) solution has no slipping contact
//             (|v_T| > 1e-6 m/s with lambda_z > 0), where it measures solver agreement, and per
//             scenario (docs/solvers.md, "Fig. 6"). Where G is singular (condition number above
//             1e12: more contact rows than the motions they touch) the impulses are not unique and
//             two exact solutions may differ by any impulse in null(J^T); the fraction is also
//             reported on the contacts of the regular problems, and per problem the velocity change
//             M^-1 J^T lambda is compared in the kinetic-energy norm sqrt(d^T G d), which does not
//             see null(J^T).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"

namespace impulse::scenarios {

struct Table2Options {
  long steps = 100000;      // per scenario and solver
  unsigned seed = 1;
  long fig6_every = 100;    // sample every n-th step that has contacts
  Index pgs_max_iterations = 200000;
  // Called every 1000 steps: (label "trot/bisection", steps done, steps total).
  std::function<void(const std::string&, long, long)> progress;
};

// The paper's Table II (seconds per 100k steps, one core of a Xeon E5-1620 at 3.6 GHz).
const std::map<std::string, std::map<std::string, double>>& paper_table2();

struct Table2Result {
  // solver -> scenario -> seconds per 100k steps (engine stage time) and wall time of the loop
  std::map<std::string, std::map<std::string, double>> seconds_per_100k, wall_seconds_per_100k;
  std::map<std::string, std::map<std::string, double>> iterations_mean;
  long failed_steps = 0;  // SolverFailed or NonFinite over all runs
  // Fig. 6
  long fig6_samples = 0;             // contact impulses compared
  double fig6_within_1pct = 0;       // fraction with relative difference < 1e-2
  long fig6_samples_no_slip = 0;     // contacts of problems without a slipping contact (PGS)
  double fig6_within_1pct_no_slip = 0;
  double fig6_slipping_fraction = 0; // fraction of compared contacts that slip (PGS solution)
  long fig6_samples_well_posed = 0;      // contacts of problems whose G is regular (cond < 1e12)
  double fig6_within_1pct_well_posed = 0;
  long fig6_problems = 0;                // problems sampled
  long fig6_singular_problems = 0;       // of which G is singular: the impulses are not unique
  double fig6_problems_motion_within_1pct = 0;  // problems whose velocity change M^-1 J^T lambda
                                                // is within 1 % of PGS's (kinetic-energy norm)
  std::map<std::string, double> fig6_within_1pct_by_scenario;
  std::vector<double> fig6_edges;    // histogram bin upper edges (last: +inf)
  std::vector<double> fig6_fraction; // fraction per bin
};

Table2Result run_table2(const Table2Options& options);

}  // namespace impulse::scenarios
