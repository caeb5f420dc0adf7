// The lane kernels for W = 4 worlds, AVX2 (see lanes_kernels.inc; compile flags in CMakeLists.txt).
#define IMPULSE_LANES_W 4
#define IMPULSE_LANES_DYNAMICS step_dynamics_w4
#define IMPULSE_LANES_FACTOR ltdl_factor_w4
#define IMPULSE_LANES_SOLVE ltdl_solve_w4
#define IMPULSE_LANES_TRANSPOSE transpose_w4
#define IMPULSE_LANES_PD implicit_pd_w4
#define IMPULSE_LANES_PD2 pd_second_pass_w4
#define IMPULSE_LANES_PRODUCTS dense_products_w4
#define IMPULSE_LANES_PATHS contact_paths_w4
#define IMPULSE_LANES_GATHER gather_w4
#define IMPULSE_LANES_SCATTER scatter_w4
#define IMPULSE_LANES_VELOCITY velocity_update_w4
#define IMPULSE_LANES_COPY_OUT copy_out_w4
#define IMPULSE_LANES_SWEEP bisection_sweep_w4
#include "lanes_kernels.inc"
