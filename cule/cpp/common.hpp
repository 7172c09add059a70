// Shared by every header of the core: fixed-width types and the one
// host+device annotation. The core must compile unchanged under g++ (CPU
// backend, kernel host shim), nvcc and NVRTC (CUDA backend), so nothing here
// may pull in a host-only header when NVRTC compiles it.
#pragma once

#if defined(__CUDACC_RTC__)
// NVRTC has no standard library headers; these are the only types we need.
typedef unsigned char uint8_t;
typedef signed char int8_t;
typedef unsigned short uint16_t;
typedef short int16_t;
typedef unsigned int uint32_t;
typedef int int32_t;
typedef unsigned long long uint64_t;
typedef long long int64_t;
#else
#include <cstdint>
#endif

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// Inlining everything into a kernel that runs ALE's whole reset_game over
// 104 games exhausts nvcc's memory; with the frame loop kept out of line the
// step and reset kernels build in under two minutes (122/136 registers, no spills).
#define CULE_HD __host__ __device__ inline
#define CULE_HOT __host__ __device__ __forceinline__
#define CULE_FRAME __host__ __device__ __noinline__
#define CULE_OP __host__ __device__ inline
// Whole phases (a step, a reset, a frame's preprocessing) and the chips'
// register accesses: kept out of line on the device, so NVVM and ptxas see
// each once instead of at every store of the opcode switch; inlined (at the
// compiler's choice) on the host.
#define CULE_PHASE __host__ __device__ __noinline__
#else
#define CULE_HD inline
// Sanitizer builds (tests/fuzz) define CULE_NO_FORCE_INLINE: forced inlining
// of instrumented code makes them compile for many minutes.
#ifdef CULE_NO_FORCE_INLINE
#define CULE_FORCE_INLINE inline
#else
#define CULE_FORCE_INLINE inline __attribute__((always_inline))
#endif
// The bus accesses sit inside every instruction: g++ must inline them.
#define CULE_HOT CULE_FORCE_INLINE
#define CULE_FRAME inline
// The CPU's per-instruction helpers: on the host, inlined into the opcode
// switch so each case folds to straight-line code (g++ otherwise calls
// fetch and the operation switches per instruction, ~25% of a frame); nvcc
// keeps its own judgement, which bounds the kernels' size.
#define CULE_OP CULE_FORCE_INLINE
#define CULE_PHASE inline
#endif

namespace cule {

// The next free slot of a list that a kernel's threads append to.
CULE_HD int32_t claim_slot(int32_t* count) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(count, 1);
#else
  return (*count)++;  // the CPU backend and the launch shim run one thread at a time per list
#endif
}

}  // namespace cule
