// The CUDA backend's kernels, one thread per environment over a BatchView
// (cule/cpp/vector/vector.hpp) that lives in device memory. The CPU backend runs the
// same VectorEnv code on its threads.
//
// Built once per mapper (cule/kernels/__init__.py KernelBuild), ahead of time
// by nvcc (python -m cule.kernels --build) or at first use by NVRTC, with
//   -DCULE_CART=cule::Cart2K
// the game and the step policy being read from the batch; -DCULE_GAMES=
// cule::OneGame<cule::games::Pong> and -DCULE_STEP=cule::VectorEnvStep
// compile them in instead. For the tests, shim.hpp compiles this file for
// the host (it defines CULE_KERNEL, blockIdx, threadIdx and blockDim and
// includes this file once per mapper). Include the core headers first.
#include "vector/vector.hpp"
#include "vector/kernel_abi.hpp"
#include "cart/carts.hpp"
#include "vector/state_rows.hpp"
#include "vector/state_check.hpp"
#include "ale/games/registry.hpp"

#ifndef CULE_KERNEL
// The register budget of a kernel and everything it calls. By default ptxas
// gives a kernel that calls out-of-line code (the CULE_PHASE functions) 96
// registers on sm_80, whatever -maxrregcount or __launch_bounds__ say, and
// the register saves around those calls spill (up to 150/176 bytes in one
// function). __maxnreg__ (CUDA 12.4+) sets the budget for the whole call
// tree. A mapper's build, which dispatches on the game at run time, needs
// 184 not to spill on sm_90 (at 168, 4-8 bytes around calls; at 176, 4 in
// the SuperChip mappers). From 176 to 192 an SM holds eleven warps' worth,
// so five blocks of CULE_THREADS_PER_BLOCK = 64 (six at 168): more than the
// launch geometry asks for below 33,792 environments. Older compilers get
// the launch bound.
#define CULE_MAX_REGISTERS 184
#if defined(__CUDACC_VER_MAJOR__) && \
    (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 4))
#define CULE_KERNEL extern "C" __global__ void __maxnreg__(CULE_MAX_REGISTERS)
#else
#define CULE_KERNEL extern "C" __global__ void __launch_bounds__(CULE_THREADS_PER_BLOCK)
#endif
#endif
#ifndef CULE_GAMES
#define CULE_GAMES cule::Games
#endif

// The step policy (vector.hpp), handed to f as with_step_policy does: both
// are compiled, and the batch's option picks one at the kernel's entry, for
// the whole launch, unless CULE_STEP compiles one in.
template <class F>
CULE_HD void with_batch_step(const cule::BatchView& batch, F&& f) {
#ifdef CULE_STEP
  f(CULE_STEP{});
#else
  cule::with_step_policy(batch.opt, f);
#endif
}

// What cule_run and cule_reset do with the step policy: classes, not lambdas,
// since NVRTC compiles a lambda in a kernel as host code.
template <class Env>
struct RunEnv {
  Env& env;
  int32_t action;
  int64_t seed;
  bool force_reset;
  template <class Step>
  CULE_HD void operator()(Step) const { (*env).template run<Step>(action, seed, force_reset); }
};
template <class Env>
struct EndEpisode {
  Env& env;
  template <class Step>
  CULE_HD void operator()(Step) const { (*env).template end_episode<Step>(); }
};

// A step is four launches on one stream, each one thread per environment
// (the state update and the resets on working copies of the environment's
// console and ALE state, loaded from lane-laid arrays: vector.hpp EnvCopy):
//   cule_run     the state update: ALE's frames with the TIA drawing nothing;
//                the frames a step captures are recorded (render_log.hpp),
//                and environments whose episode is over are listed for reset;
//   cule_render  replays the recorded frames into the TIA buffers, then
//                palette, grey, max-pool, resize into the frame stack;
//   cule_reset   the listed environments' resets, packed in warps of their
//                own (ALE's reset sequence or a cached start state);
//   cule_gather  stacks, rewards and flags into the output tensors.

// Launch geometry of the emulating kernels (cule_run, cule_reset): blocks of
// warps in which only the first `per_warp` lanes work, each on its own
// environment. A small batch then spreads over every SM, one environment or
// a few per warp, instead of filling a few SMs with whole warps whose
// threads diverge anyway; a large one fills whole warps. The rule that picks
// per_warp is cule.backends.cuda.launch_geometry. Returns this thread's
// position among the working threads of the launch, or -1 when it idles.
CULE_HD int work_index(int per_warp) {
  const unsigned lane = threadIdx.x % 32u;
  const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
  return lane < (unsigned)per_warp ? (int)(warp * (unsigned)per_warp + lane) : -1;
}

// The console slot of a working thread: shared memory on the device (the
// launch gives each block (blockDim / 32) x per_warp MachineSlots of dynamic
// shared memory), a local on the host.
#if CULE_DEVICE_CODE && !CULE_DEVICE_ON_HOST
#define CULE_MACHINE_SLOT(name, per_warp)                                                    \
  extern __shared__ cule::MachineSlot cule_slots[];                                          \
  cule::Machine& name = cule_slots[(threadIdx.x / 32u) * (unsigned)(per_warp) + threadIdx.x % 32u].m
#else
#define CULE_MACHINE_SLOT(name, per_warp) cule::Machine name
#endif

// Every kernel's parameters are kernel_abi.hpp's lists.
#define CULE_P(type, name) type name
#define CULE_S ,

// The step kernels take `batches`, the BatchViews launched together (one,
// or a mixed batch's games of one mapper), and name environments by
// reference (vector.hpp env_ref): refs[i] is the i-th listed environment.

// The state update (EnvVectorizer::execute_env) of environments
// refs[0..count): actions are action words (ale.hpp: an ALE action id, a
// paddle step above it); seeds (or null) apply to forced resets, which run
// here. Ended episodes go to the batches' shared reset list (zero its count
// before the launch).
CULE_KERNEL cule_run(CULE_RUN_PARAMS) {
  const int i = work_index(per_warp);
  if (i < 0 || i >= count) return;
  CULE_MACHINE_SLOT(slot, per_warp);
  const cule::BatchView& batch = batches[cule::ref_batch(refs[i])];
  using Env = cule::EnvCopy<CULE_CART, CULE_GAMES>;
  Env env{batch, cule::ref_env(refs[i]), slot};
  with_batch_step(batch, RunEnv<Env>{env, actions ? actions[i] : 0, seeds ? seeds[i] : -1, force_reset != 0});
}

// The render pass over the same environments: those whose step recorded
// frames draw them and process their screen. One per thread, whole warps.
CULE_KERNEL cule_render(CULE_RENDER_PARAMS) {
  const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= count) return;
  cule::EnvFrames{batches[cule::ref_batch(refs[i])], cule::ref_env(refs[i])}.render();
}

// The resets cule_run listed, with cule_run's geometry; launched with as
// many working threads as cule_run had, since the count stays on the device.
// Batches launched together share the list, so the first holds it.
CULE_KERNEL cule_reset(CULE_RESET_PARAMS) {
  const int i = work_index(per_warp);
  if (i < 0 || i >= *batches->reset_count) return;
  CULE_MACHINE_SLOT(slot, per_warp);
  const int32_t ref = batches->reset_list[i];
  const cule::BatchView& batch = batches[cule::ref_batch(ref)];
  using Env = cule::EnvCopy<CULE_CART, CULE_GAMES>;
  Env env{batch, cule::ref_env(ref), slot};
  with_batch_step(batch, EndEpisode<Env>{env});
}

// The listed environments' observations (stacked, oldest first), rewards,
// flags, lives and frame counters, in the order of refs.
#define CULE_OUTPUT_ARG(type, name, element, field) name,
CULE_KERNEL cule_gather(CULE_GATHER_PARAMS) {
  const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= count) return;
  cule::EnvFrames{batches[cule::ref_batch(refs[i])], cule::ref_env(refs[i])}.gather(
      i, cule::StepOutputs{obs, CULE_STEP_OUTPUTS(CULE_OUTPUT_ARG) final_obs});
}
#undef CULE_OUTPUT_ARG

// Environment states as rows of bytes (state_rows.hpp), one block per listed
// environment, its threads striding over the row: rows[i * row_bytes ...],
// from byte `offset` on, is environment ids[i]'s state, written (save != 0)
// or read back into the environment. A save adds the row's digest to
// digests[i] (zeroed before the launch).
CULE_KERNEL cule_state_rows(CULE_STATE_ROWS_PARAMS) {
  const int i = (int)blockIdx.x;
  if (i >= count) return;
  const uint64_t digest = cule::transfer_state(*batch, ids[i], with_rng != 0,
                                               rows + (size_t)i * (uint32_t)row_bytes + offset, save != 0,
                                               threadIdx.x, blockDim.x);
  if (save) cule::add_shared(digests + i, digest);
}

// The digests of rows [count, row_bytes] (payload_bytes from `offset` on),
// one block per row, added to sums[i] (zeroed before the launch).
CULE_KERNEL cule_row_digests(CULE_ROW_DIGESTS_PARAMS) {
  const int i = (int)blockIdx.x;
  if (i >= count) return;
  cule::add_shared(sums + i, cule::row_digest(rows + (size_t)i * (uint32_t)row_bytes + offset,
                                              (uint32_t)payload_bytes, threadIdx.x, blockDim.x));
}

// Before rows are loaded: faults[i], row i's first fault (state_check.hpp),
// 0 if it may be loaded; with `sums` (cule_row_digests's) each must equal
// the digest `expected[i]` too. One thread per row.
CULE_KERNEL cule_check_rows(CULE_CHECK_ROWS_PARAMS) {
  const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= count) return;
  faults[i] = sums && sums[i] != expected[i]
                  ? cule::kStateDigest
                  : cule::check_row<CULE_CART>(*batch, rows + (size_t)i * (uint32_t)row_bytes + offset, with_rng != 0);
}

// Forks: environment src[i]'s state onto dst[i], inside device memory.
CULE_KERNEL cule_copy_state(CULE_COPY_STATE_PARAMS) {
  const int i = (int)blockIdx.x;
  if (i >= count) return;
  cule::fork_state(*batch, src[i], dst[i], with_rng != 0, threadIdx.x, blockDim.x);
}
#undef CULE_P
#undef CULE_S
