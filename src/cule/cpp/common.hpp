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
// Nor offsetof: the classic definition, which NVRTC folds to a constant
// (though not in a constant expression: static_asserts on layout are host-side).
#define offsetof(type, member) ((size_t)&reinterpret_cast<const volatile char&>(((type*)0)->member))
#else
#include <cstddef>
#include <cstdint>
#endif

// Code compiled for the GPU (nvcc's device pass, NVRTC) as opposed to the
// host (g++: the CPU backend and the launch shim). Where the two want
// different code for the same result (registers are scarcer on the device,
// tables and vector lanes cheaper on the host), this one switch says so.
// A host compiler given -DCULE_DEVICE_CODE=1 builds the device's side
// (cule/kernels/device_shim.py), so that the tests run it on the CPU too; the
// few CUDA built-ins it calls get host stand-ins below.
#ifndef CULE_DEVICE_CODE
#if defined(__CUDA_ARCH__) || defined(__CUDACC_RTC__)
#define CULE_DEVICE_CODE 1
#else
#define CULE_DEVICE_CODE 0
#endif
#endif
// The device's code on a host compiler (not nvcc's host pass, which sees
// CUDA's own declarations).
#if CULE_DEVICE_CODE && !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
#define CULE_DEVICE_ON_HOST 1
#include <cstring>
inline int __ffsll(long long v) { return __builtin_ffsll(v); }
inline unsigned __brev(unsigned v) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((v >> i) & 1u) << (31 - i);
  return r;
}
// Single-precision steps rounded to nearest, as without contraction (the
// shim builds with -ffp-contract=off); rint rounds half to even.
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline int __float2int_rn(float v) { return (int)__builtin_rintf(v); }
template <class T>
T atomicAdd(T* at, T v) {  // one thread at a time on the shim
  const T old = *at;
  *at = old + v;
  return old;
}
#else
#define CULE_DEVICE_ON_HOST 0
#endif

// The host's frame loop may dispatch opcodes threaded: each handler ends in
// its own indirect jump to the next one (console::run_frame, where it says
// for which mappers), which a branch predictor learns per opcode, where one
// shared jump mispredicts more often. It needs GCC's computed goto (g++, clang); nvcc and
// NVRTC have none, so the kernels keep cpu::step's switch.
#ifndef CULE_THREADED_DISPATCH
#if !CULE_DEVICE_CODE && !defined(__CUDACC__) && defined(__GNUC__)
#define CULE_THREADED_DISPATCH 1
#else
#define CULE_THREADED_DISPATCH 0
#endif
#endif

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// Inlining everything into a kernel that runs ALE's whole reset_game over
// 104 games exhausts nvcc's memory; with the frame loop kept out of line the
// step and reset kernels build in under two minutes (kernels.cu's register
// budget keeps the calls from spilling).
#define CULE_HD __host__ __device__ inline
#define CULE_HOT __host__ __device__ __forceinline__
#define CULE_FRAME __host__ __device__ __noinline__
#define CULE_OP __host__ __device__ inline
// Whole phases (a step, a reset, a frame's preprocessing) and the chips'
// register accesses: kept out of line on the device, so NVVM and ptxas see
// each once instead of at every store of the opcode switch; inlined (at the
// compiler's choice) on the host.
#define CULE_PHASE __host__ __device__ __noinline__
#define CULE_IO __host__ __device__ __forceinline__
#define CULE_REGISTER_ACCESS __host__ __device__ __noinline__
#define CULE_CATCH_UP __host__ __device__ __noinline__
#define CULE_RARE __host__ __device__ __noinline__
#define CULE_LAMBDA_INLINE
#else
#define CULE_HD inline
// Sanitizer builds (tests/fuzz) define CULE_NO_FORCE_INLINE: forced inlining
// of instrumented code makes them compile for many minutes.
#ifdef CULE_NO_FORCE_INLINE
#define CULE_FORCE_INLINE inline
#define CULE_LAMBDA_INLINE
#else
#define CULE_FORCE_INLINE inline __attribute__((always_inline))
#define CULE_LAMBDA_INLINE __attribute__((always_inline))  // a lambda called from many cases
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
// The bus's slow paths (TIA, RIOT I/O): one out-of-line copy on the host.
#ifdef CULE_NO_FORCE_INLINE
#define CULE_IO inline
#else
#define CULE_IO inline __attribute__((noinline))
#endif
// A chip's register access (tia::poke): one out-of-line copy on the device;
// on the host inlined into out-of-line callers, one call per access (for TIA
// writes, one function per register: tia::kPokes).
#define CULE_REGISTER_ACCESS CULE_FORCE_INLINE
// The TIA's picture catch-up (tia::render_to), called from each register's
// write: out of line, so a write that draws nothing saves no registers for it.
#define CULE_CATCH_UP inline __attribute__((noinline))
#endif
#ifndef CULE_RARE
// A rare path inside the opcode switch: out of line everywhere, so the
// switch's register allocation does not pay for it.
#define CULE_RARE inline __attribute__((noinline))
#endif

// Which way a branch of the opcode switch usually goes, on the host: g++
// allocates the switch's registers by block frequency, so paths marked
// unlikely (the TIA, the RIOT's I/O, a mapper's hotspots) take the spills
// and the common ones (ROM and RAM) keep their values in registers. The
// device compilers keep their own judgement.
#if CULE_DEVICE_CODE
#define CULE_LIKELY(x) (x)
#define CULE_UNLIKELY(x) (x)
#else
#define CULE_LIKELY(x) __builtin_expect(!!(x), 1)
#define CULE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#endif

// Structs whose members the host binding shows (host/field_views.hpp) list
// them once as an X-macro, X(type, name), and declare them with this; an
// array member's type is an alias (`using T = uint32_t[6]`). Member comments
// are /* */ since a // comment would swallow the list's line continuation.
#define CULE_DECLARE_FIELD(type, name) type name;

namespace cule {

// Per-environment arrays come in two layouts, chosen by their `lanes`. 1:
// each environment's items contiguous (the CPU backend). kDeviceLanes on
// device batches: the array is cut in tiles of a warp's 32 environments, and
// item i of the tile's lane l sits at tile item i * 32 + l, so when a warp's
// threads touch the same item of their environments they touch one line.
constexpr uint32_t kDeviceLanes = 32;

// Where item `item` of environment `env` sits, in an array of `items` items
// per environment.
CULE_HD size_t lane_slot(int env, size_t item, size_t items, uint32_t lanes) {
  return ((size_t)((uint32_t)env / lanes) * items + item) * lanes + (uint32_t)env % lanes;
}

// Copies bytes between objects of different types (a store through a cast
// pointer would break C++'s aliasing rules); a few bytes compile to moves.
// The device has memcpy (NVRTC knows no __builtin_memcpy), the host the
// built-in without <cstring>.
CULE_HD void copy_bytes(void* to, const void* from, size_t n) {
#if CULE_DEVICE_CODE
  memcpy(to, from, n);
#else
  __builtin_memcpy(to, from, n);
#endif
}
CULE_HD void copy_word(void* to, const void* from) { copy_bytes(to, from, 4); }

// One struct per environment, stored as 4-byte words in lane layout; a
// kernel thread loads its environment's struct into a working copy (local
// memory, which the hardware interleaves per thread in the same way) and
// stores it back.
template <class T>
struct LaneArray {
  static_assert(sizeof(T) % 4 == 0, "lane arrays hold whole 4-byte words");
  static constexpr size_t kWords = sizeof(T) / 4;
  uint32_t* words;
  uint32_t lanes;

  // Word 0 of environment env's item; its word w is w * lanes further on.
  CULE_HD uint32_t* item(int env) const { return words + lane_slot(env, 0, kWords, lanes); }

  CULE_HD void load(int env, T& out) const {
    const uint32_t* from = words + lane_slot(env, 0, kWords, lanes);
    char* to = (char*)&out;
    for (size_t w = 0; w < kWords; ++w) copy_word(to + 4 * w, from + w * lanes);
  }
  CULE_HD void store(int env, const T& in) const {
    uint32_t* to = words + lane_slot(env, 0, kWords, lanes);
    const char* from = (const char*)&in;
    for (size_t w = 0; w < kWords; ++w) copy_word(to + w * lanes, from + 4 * w);
  }
};

// The next free slot of a list that a kernel's threads append to.
CULE_HD int32_t claim_slot(int32_t* count) {
#if CULE_DEVICE_CODE
  return atomicAdd(count, 1);
#else
  return (*count)++;  // the CPU backend and the launch shim run one thread at a time per list
#endif
}

// Adds to a sum that several threads of a kernel add to.
CULE_HD void add_shared(unsigned long long* sum, unsigned long long value) {
#if CULE_DEVICE_CODE
  atomicAdd(sum, value);
#else
  *sum += value;  // the launch shim runs one thread at a time
#endif
}

}  // namespace cule
