// The lane kernels for W = 8 worlds, AVX-512F (see lanes_kernels.inc; compile flags in CMakeLists.txt).
#define IMPULSE_LANES_W 8
#define IMPULSE_LANES_DYNAMICS step_dynamics_w8
#define IMPULSE_LANES_FACTOR ltdl_factor_w8
#define IMPULSE_LANES_SOLVE ltdl_solve_w8
#define IMPULSE_LANES_TRANSPOSE transpose_w8
#define IMPULSE_LANES_PD implicit_pd_w8
#define IMPULSE_LANES_PD2 pd_second_pass_w8
#define IMPULSE_LANES_PRODUCTS dense_products_w8
#define IMPULSE_LANES_PATHS contact_paths_w8
#define IMPULSE_LANES_GATHER gather_w8
#define IMPULSE_LANES_SCATTER scatter_w8
#define IMPULSE_LANES_VELOCITY velocity_update_w8
#define IMPULSE_LANES_COPY_OUT copy_out_w8
#define IMPULSE_LANES_SWEEP bisection_sweep_w8
#include "lanes_kernels.inc"
