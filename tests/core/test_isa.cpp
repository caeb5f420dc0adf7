// The kernels' two instruction sets (core/isa.hpp): the switch, its default and its errors, and
// that the x86-64-v3 copies give the baseline's bits. (That the switch reaches the copies: ctest
// isa_objects finds each kernel's run_v3 copy in the library; `impulse bench isa` times both.)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>

#include "impulse/core/error.hpp"
#include "impulse/core/isa.hpp"
#include "impulse/dynamics/ltdl.hpp"
#include "impulse/dynamics/step_dynamics.hpp"
#include "impulse/world/world.hpp"
#include "impulse/world/world_file.hpp"
#include "support/test_models.hpp"

using namespace impulse;
using namespace impulse::test;

namespace {

// Sets an instruction set for a scope (the switch is process-wide).
class IsaScope {
 public:
  explicit IsaScope(KernelIsa isa) : before_(kernel_isa()) { set_kernel_isa(isa); }
  ~IsaScope() { set_kernel_isa(before_); }
  IsaScope(const IsaScope&) = delete;
  IsaScope& operator=(const IsaScope&) = delete;

 private:
  KernelIsa before_;
};

bool isa_v3_runs() {
  if (kernel_isa_supported(KernelIsa::X86_64_V3)) return true;
  static bool said = false;
  if (!said) std::cout << "test_isa: this CPU does not run x86-64-v3: its comparisons are skipped\n";
  said = true;
  return false;
}

// h, M's factor (D and L) and M^-1 x of one state, under the instruction set in use
struct IsaDynamics {
  VecX h, D, L, solved;
};
IsaDynamics isa_dynamics(const Model& m, Data& d, const VecX& q, const VecX& u, const VecX& x) {
  IsaDynamics r;
  r.h = compute_step_dynamics(m, d, q, u);
  ltdl_factor(m, d);
  r.D = d.D;
  r.L = d.L_anc;
  r.solved = x;
  ltdl_solve(m, d, r.solved);
  return r;
}

bool isa_bits_equal(const VecX& a, const VecX& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(Scalar) * static_cast<std::size_t>(a.size())) == 0;
}

}  // namespace

TEST_CASE("kernel instruction sets: names, support and errors", "[isa]") {
  CHECK(std::string(to_string(KernelIsa::Baseline)) == "baseline");
  CHECK(std::string(to_string(KernelIsa::X86_64_V3)) == "x86-64-v3");
  CHECK(parse_kernel_isa("baseline", "test") == KernelIsa::Baseline);
  CHECK(parse_kernel_isa("x86-64-v3", "test") == KernelIsa::X86_64_V3);
  CHECK_THROWS_WITH(parse_kernel_isa("avx2", "--isa"), Catch::Contains("--isa") && Catch::Contains("'avx2'"));
  CHECK(kernel_isa_supported(KernelIsa::Baseline));
  // the default: IMPULSE_ISA's choice if it is set, else the CPU's
  const char* env = std::getenv("IMPULSE_ISA");
  const KernelIsa cpu = env && *env                                      ? parse_kernel_isa(env, "IMPULSE_ISA")
                        : kernel_isa_supported(KernelIsa::X86_64_V3) ? KernelIsa::X86_64_V3
                                                                         : KernelIsa::Baseline;
  CHECK(kernel_isa() == cpu);
  if (!kernel_isa_supported(KernelIsa::X86_64_V3)) {
    CHECK_THROWS_AS(set_kernel_isa(KernelIsa::X86_64_V3), InvalidArgument);
    CHECK(kernel_isa() == KernelIsa::Baseline);
    return;
  }
  {
    const IsaScope base(KernelIsa::Baseline);
    CHECK(kernel_isa() == KernelIsa::Baseline);
    {
      const IsaScope v3(KernelIsa::X86_64_V3);
      CHECK(kernel_isa() == KernelIsa::X86_64_V3);
    }
    CHECK(kernel_isa() == KernelIsa::Baseline);
  }
  CHECK(kernel_isa() == cpu);
}

TEST_CASE("x86-64-v3 dynamics kernels give the baseline's bits", "[isa]") {
  if (!isa_v3_runs()) return;
  std::mt19937 rng(7);
  for (const NamedModel& nm : dynamics_test_models()) {
    INFO(nm.name);
    const Model& m = nm.model;
    Data d(m);
    for (int trial = 0; trial < 10; ++trial) {
      VecX q, u;
      random_state(m, rng, q, u);
      const VecX x = VecX::Random(m.nv);
      IsaDynamics base, v3;
      {
        const IsaScope scope(KernelIsa::Baseline);
        base = isa_dynamics(m, d, q, u, x);
      }
      {
        const IsaScope scope(KernelIsa::X86_64_V3);
        v3 = isa_dynamics(m, d, q, u, x);
      }
      // no fused multiply-adds (CMakeLists.txt): every product and sum rounds as in the baseline
      CHECK(isa_bits_equal(v3.h, base.h));
      CHECK(isa_bits_equal(v3.D, base.D));
      CHECK(isa_bits_equal(v3.L, base.L));
      CHECK(isa_bits_equal(v3.solved, base.solved));
    }
  }
}

TEST_CASE("a World stepped on x86-64-v3 kernels has the baseline's bits", "[isa]") {
  if (!isa_v3_runs()) return;
  const std::unique_ptr<World> world = load_world(std::string(IMPULSE_SOURCE_DIR) + "/models/worlds/anymal_stand.xml");
  for (int k = 0; k < 50; ++k) world->integrate();
  const WorldState start = world->save_state();
  const auto run = [&](KernelIsa isa) {
    const IsaScope scope(isa);
    world->restore_state(start);
    for (int k = 0; k < 500; ++k) world->integrate();
    return VecX(world->system(0).q());
  };
  const VecX base = run(KernelIsa::Baseline);
  const VecX v3 = run(KernelIsa::X86_64_V3);
  CHECK(isa_bits_equal(v3, base));
}
