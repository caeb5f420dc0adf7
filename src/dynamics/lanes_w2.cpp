// The lane kernels for W = 2 worlds, SSE2, the x86-64 baseline (see lanes_kernels.inc and CMakeLists.txt).
#define IMPULSE_LANES_W 2
#define IMPULSE_LANES_DYNAMICS step_dynamics_w2
#define IMPULSE_LANES_FACTOR ltdl_factor_w2
#define IMPULSE_LANES_SOLVE ltdl_solve_w2
#define IMPULSE_LANES_TRANSPOSE transpose_w2
#define IMPULSE_LANES_PD implicit_pd_w2
#define IMPULSE_LANES_PD2 pd_second_pass_w2
#define IMPULSE_LANES_PRODUCTS dense_products_w2
#define IMPULSE_LANES_PATHS contact_paths_w2
#define IMPULSE_LANES_GATHER gather_w2
#define IMPULSE_LANES_SCATTER scatter_w2
#define IMPULSE_LANES_VELOCITY velocity_update_w2
#define IMPULSE_LANES_COPY_OUT copy_out_w2
#define IMPULSE_LANES_SWEEP bisection_sweep_w2
#include "lanes_kernels.inc"
