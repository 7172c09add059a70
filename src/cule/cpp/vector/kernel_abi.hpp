// The boundary between the CUDA kernels and Python, declared once: which
// kernels there are, each one's parameters in order (type and name), and the
// launch constants. kernels.cu defines the kernels from these lists, the
// launch shim unpacks its arguments by them and checks each one's type, and
// cule._core exports them (kernel_signatures, threads_per_block), from which
// the Python launchers build every argument list by name.
//
// A parameter list is written with two hooks the place that expands it
// defines first: CULE_P(type, name) for a parameter and CULE_S between two.
// (A type must not hold a comma.)
#pragma once

#include "vector/vector.hpp"

// Threads per block of every launch: two warps. The emulating kernels' lanes
// that work are chosen inside a warp (cule.backends.cuda.launch_geometry).
#define CULE_THREADS_PER_BLOCK 64

// X(kernel, TAG): the kernel's parameters are CULE_<TAG>_PARAMS.
#define CULE_KERNEL_LIST(X)                                                                                   \
  X(cule_run, RUN) X(cule_render, RENDER) X(cule_reset, RESET) X(cule_gather, GATHER)                        \
  X(cule_state_rows, STATE_ROWS) X(cule_row_digests, ROW_DIGESTS) X(cule_check_rows, CHECK_ROWS)             \
  X(cule_copy_state, COPY_STATE)

#define CULE_RUN_PARAMS                                                                                       \
  CULE_P(const cule::BatchView*, batches) CULE_S CULE_P(const int32_t*, refs) CULE_S CULE_P(int32_t, count) \
  CULE_S CULE_P(const int32_t*, actions) CULE_S CULE_P(const int64_t*, seeds) CULE_S                       \
  CULE_P(int32_t, force_reset) CULE_S CULE_P(int32_t, per_warp)

#define CULE_RENDER_PARAMS \
  CULE_P(const cule::BatchView*, batches) CULE_S CULE_P(const int32_t*, refs) CULE_S CULE_P(int32_t, count)

#define CULE_RESET_PARAMS CULE_P(const cule::BatchView*, batches) CULE_S CULE_P(int32_t, per_warp)

// cule_gather writes one array per step output (vector.hpp CULE_STEP_OUTPUTS).
#define CULE_OUTPUT_PARAM(type, name, element, field) CULE_P(type*, name) CULE_S
#define CULE_GATHER_PARAMS                                                                                    \
  CULE_P(const cule::BatchView*, batches) CULE_S CULE_P(const int32_t*, refs) CULE_S CULE_P(int32_t, count) \
  CULE_S CULE_P(uint8_t*, obs) CULE_S CULE_STEP_OUTPUTS(CULE_OUTPUT_PARAM) CULE_P(uint8_t*, final_obs)

#define CULE_STATE_ROWS_PARAMS                                                                                \
  CULE_P(const cule::BatchView*, batch) CULE_S CULE_P(const int32_t*, ids) CULE_S CULE_P(int32_t, count)    \
  CULE_S CULE_P(uint8_t*, rows) CULE_S CULE_P(int32_t, row_bytes) CULE_S CULE_P(int32_t, offset) CULE_S     \
  CULE_P(int32_t, with_rng) CULE_S CULE_P(int32_t, save) CULE_S CULE_P(unsigned long long*, digests)

#define CULE_ROW_DIGESTS_PARAMS                                                                               \
  CULE_P(const uint8_t*, rows) CULE_S CULE_P(int32_t, count) CULE_S CULE_P(int32_t, row_bytes) CULE_S       \
  CULE_P(int32_t, offset) CULE_S CULE_P(int32_t, payload_bytes) CULE_S CULE_P(unsigned long long*, sums)

#define CULE_CHECK_ROWS_PARAMS                                                                                \
  CULE_P(const cule::BatchView*, batch) CULE_S CULE_P(const uint8_t*, rows) CULE_S CULE_P(int32_t, count)   \
  CULE_S CULE_P(int32_t, row_bytes) CULE_S CULE_P(int32_t, offset) CULE_S CULE_P(int32_t, with_rng) CULE_S  \
  CULE_P(const unsigned long long*, sums) CULE_S CULE_P(const unsigned long long*, expected) CULE_S         \
  CULE_P(int32_t*, faults)

#define CULE_COPY_STATE_PARAMS                                                                                \
  CULE_P(const cule::BatchView*, batch) CULE_S CULE_P(const int32_t*, src) CULE_S CULE_P(const int32_t*, dst) \
  CULE_S CULE_P(int32_t, count) CULE_S CULE_P(int32_t, with_rng)
