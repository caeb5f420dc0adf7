// The lane kernels for W = 8 worlds, AVX-512F (see lanes_kernels.inc; compile flags in CMakeLists.txt).
#define IMPULSE_LANES_W 8
#define IMPULSE_LANES_ENTRY step_dynamics_factor_w8
#include "lanes_kernels.inc"
