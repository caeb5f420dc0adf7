// No heap allocation in any dynamics algorithm after Data construction (docs/architecture.md,
// "Model and Data"), on ANYmal, the quadruped and random trees.
//
// This file also defines the allocation counter of tests/support/alloc_counter.hpp: malloc,
// calloc, realloc and the aligned allocators are interposed (glibc allows the executable to
// replace them) and forwarded to glibc's __libc_* entry points, counting while enabled.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdlib>

#include "impulse/dynamics/aba.hpp"
#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/energy.hpp"
#include "impulse/dynamics/jacobian.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/dynamics/ltdl.hpp"
#include "impulse/dynamics/rnea.hpp"
#include "impulse/dynamics/step_dynamics.hpp"
#include "support/alloc_counter.hpp"
#include "support/test_models.hpp"

// (the sanitizers bring allocators of their own: no counter under them)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define IMPULSE_NO_MALLOC_HOOK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define IMPULSE_NO_MALLOC_HOOK 1
#endif
#endif

namespace {
volatile bool g_counting = false;
volatile long g_count = 0;
volatile long g_bytes = 0;  // net bytes (usable size) allocated minus freed while counting
}  // namespace

#ifndef IMPULSE_NO_MALLOC_HOOK
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);
std::size_t malloc_usable_size(void*);

static void* counted(void* p) {
  if (g_counting && p) g_bytes = g_bytes + static_cast<long>(malloc_usable_size(p));
  return p;
}
void* malloc(std::size_t n) {
  if (g_counting) g_count = g_count + 1;
  return counted(__libc_malloc(n));
}
void free(void* p) {
  if (g_counting && p) g_bytes = g_bytes - static_cast<long>(malloc_usable_size(p));
  __libc_free(p);
}
void* calloc(std::size_t n, std::size_t s) {
  if (g_counting) g_count = g_count + 1;
  return counted(__libc_calloc(n, s));
}
void* realloc(void* p, std::size_t n) {
  if (g_counting) g_count = g_count + 1;
  if (g_counting && p) g_bytes = g_bytes - static_cast<long>(malloc_usable_size(p));
  return counted(__libc_realloc(p, n));
}
void* memalign(std::size_t a, std::size_t n) {
  if (g_counting) g_count = g_count + 1;
  return counted(__libc_memalign(a, n));
}
void* aligned_alloc(std::size_t a, std::size_t n) {
  if (g_counting) g_count = g_count + 1;
  return counted(__libc_memalign(a, n));
}
int posix_memalign(void** out, std::size_t a, std::size_t n) {
  if (g_counting) g_count = g_count + 1;
  *out = counted(__libc_memalign(a, n));
  return *out ? 0 : 12;  // ENOMEM
}
}
#endif

namespace impulse {
namespace test {
bool alloc_counter_available() {
#ifdef IMPULSE_NO_MALLOC_HOOK
  return false;
#else
  return true;
#endif
}
void alloc_counter_start() {
  g_count = 0;
  g_bytes = 0;
  g_counting = true;
}
long alloc_counter_stop() {
  g_counting = false;
  return g_count;
}
long alloc_counter_bytes() { return g_bytes; }
}  // namespace test
}  // namespace impulse

using namespace impulse;
using namespace impulse::test;

TEST_CASE("no_alloc: the counter sees Eigen and operator new allocations", "[dynamics]") {
  if (!alloc_counter_available()) return;
  alloc_counter_start();
  VecX* x = new VecX(100);
  x->setOnes();
  delete x;
  CHECK(alloc_counter_stop() >= 2);
}

TEST_CASE("no_alloc: dynamics algorithms do not allocate after Data construction", "[dynamics]") {
  if (!alloc_counter_available()) {
    WARN("allocation counter unavailable under sanitizers: skipped");
    return;
  }
  for (const NamedModel& nm : dynamics_test_models()) {
    INFO(nm.name);
    const Model& model = nm.model;
    Data data(model);
    std::mt19937 rng(1);
    VecX q, u;
    random_state(model, rng, q, u);
    const VecX tau = random_vector(model.nv, rng);
    const VecX udot = random_vector(model.nv, rng);
    Vec6Vector f_ext(model.nb, Vec6::Ones());
    VecX x = random_vector(model.nv, rng);
    MatX X = MatX::Random(model.nv, 12);
    Mat6X J6(6, model.nv);
    Mat3X J3(3, model.nv);
    Scalar sink = 0;
    alloc_counter_start();
    for (int rep = 0; rep < 2; ++rep) {
      forward_kinematics(model, data, q);
      forward_kinematics(model, data, q, u);
      sink += rnea(model, data, q, u, udot)[0];
      sink += rnea(model, data, q, u, udot, &f_ext)[0];
      sink += nonlinear_effects(model, data, q, u)[0];
      sink += gravity_torques(model, data, q)[0];
      sink += crba(model, data, q)(0, 0);
      sink += compute_step_dynamics(model, data, q, u)[0];
      sink += compute_step_dynamics(model, data, q, u, &f_ext)[0];
      sink += crba(model, data, q)(0, 0);
      ltdl_factor(model, data);
      ltdl_solve(model, data, x);
      ltdl_solve(model, data, X);
      ltdl_solve_LT(model, data, X);
      ltdl_solve_L(model, data, X);
      ltdl_solve_LT_branch(model, data, x, model.nb - 1);
      sink += aba(model, data, q, u, tau)[0];
      sink += aba(model, data, q, u, tau, &f_ext)[0];
      compute_joint_jacobians(model, data, q);
      for (Index b = 0; b < model.nb; ++b) {
        frame_jacobian(model, data, b, Vec3(0.1, 0.2, 0.3), J6);
        point_jacobian(model, data, b, Vec3(0.1, 0.2, 0.3), J3);
      }
      sink += frame_jacobian(model, data, q, model.nb - 1, Vec3::Zero())(0, 0);
      sink += point_jacobian(model, data, q, model.nb - 1, Vec3::Zero())(0, 0);
      sink += kinetic_energy(model, data, q, u) + potential_energy(model, data, q);
      sink += center_of_mass(model, data, q)[0] + center_of_mass(model, data, q, u)[0];
      sink += momentum(model, data, q, u)[0];
      sink += frame_placement(model, data, 0).p[0] + point_velocity(data, 0, Vec3::Zero())[0];
    }
    const long n = alloc_counter_stop();
    CHECK(n == 0);
    CHECK(std::isfinite(sink));
  }
}
