// An environment's whole state as one row of bytes, for clone, restore and
// fork (AtariVectorEnv.clone_state / restore_state / copy_state). Host and
// device: the CPU backend copies rows with these functions, the CUDA backend
// with kernels.cu's cule_state_rows and cule_copy_state, a block of threads
// per environment.
//
// A row holds, in this order, everything a step reads: the console, the ALE
// state (frame counters included), the sticky-action RNG (optional, as ALE's
// include_rng), the vector env's state (the no-op RNG, the last step's
// flags), its last results, both TIA frame buffers (a short frame shows an
// older one's rows), the two processed captures, the observation ring and its
// next slot, and SameStep's final observations. Lane arrays (the device's
// interleaved layout, common.hpp) are read word by word, so a row is the
// same bytes on the CPU and on a GPU.
#pragma once

#include "common.hpp"
#include "vector.hpp"

#if !CULE_DEVICE_CODE
#include <cstddef>
#endif

namespace cule {

// The TIA's playfield pixels and their key (tia.hpp) are a cache that only
// drawing fills: the CPU backend draws as it steps, the CUDA backend in its
// render pass on a copy of the TIA, so the consoles' caches differ while
// everything else is equal. A saved row holds these words stale (all ones:
// a key no playfield has), so that rows are the same bytes on every backend,
// and a restored console rebuilds the cache when it next draws.
constexpr uint32_t kPlayfieldCacheFirstWord = 51, kPlayfieldCacheEndWord = 58;  // of a Machine
#if !CULE_DEVICE_CODE
static_assert(offsetof(Machine, tia) + offsetof(Tia, pf_bits_key) == 4 * kPlayfieldCacheFirstWord &&
                  offsetof(Machine, tia) + offsetof(Tia, pf_bits) == 4 * kPlayfieldCacheFirstWord + 4 &&
                  offsetof(Machine, tia) + offsetof(Tia, pf_bits) + sizeof(PlayfieldBits) ==
                      4 * kPlayfieldCacheEndWord,
              "the playfield cache's words moved: update kPlayfieldCacheFirstWord and kPlayfieldCacheEndWord");
#endif

// One stretch of a state: units of `unit` bytes (4 in a lane array, else 1),
// `step` bytes apart (4 x lanes in a lane array; contiguous: step == unit).
struct StatePart {
  uint8_t* at;
  uint32_t bytes;
  uint32_t unit;
  uint32_t step;

  CULE_HD uint32_t units() const { return bytes / unit; }
  CULE_HD bool contiguous() const { return step == unit; }
  // The same stretch packed at `to` (a row's bytes).
  CULE_HD StatePart packed(uint8_t* to) const { return StatePart{to, bytes, unit, unit}; }
};

template <class T>
CULE_HD StatePart lane_part(const LaneArray<T>& array, int env) {
  return StatePart{(uint8_t*)array.item(env), (uint32_t)sizeof(T), 4, 4 * array.lanes};
}
CULE_HD StatePart byte_part(void* at, uint32_t bytes) { return StatePart{(uint8_t*)at, bytes, 1, 1}; }

constexpr int kMaxStateParts = 10;
constexpr int kMachinePart = 0;  // the console is a row's first part

// Environment env's parts in row order; returns how many. `names`, when
// given, gets each part's name (the host's state_layout, for diagnostics).
CULE_HD int state_parts(const BatchView& b, int env, bool with_rng, StatePart* p, const char** names = nullptr) {
  const EnvFrames f{b, env};
  int n = 0;
  auto add = [&](const StatePart& part, const char* name) {
    if (names) names[n] = name;
    p[n++] = part;
  };
  add(lane_part(b.machines, env), "machine");  // first: transfer_state's kMachinePart
  add(lane_part(b.envs, env), "ale_state");
  if (with_rng) add(lane_part(b.rngs, env), "sticky_rng");
  add(byte_part(b.vstates + env, (uint32_t)sizeof(VectorState)), "vector_state");
  add(byte_part(b.results + env, (uint32_t)sizeof(EnvResult)), "results");
  add(byte_part(f.buffers(), 2 * b.frame_bytes), "tia_buffers");
  add(byte_part(f.raw(0), 2 * b.raw_bytes), "captures");  // raw(0) and raw(1) are adjacent
  add(byte_part(f.stack(), f.stacked_bytes()), "stack");
  add(byte_part(b.stack_index + env, 4), "stack_index");
  if (b.final_stacks) add(byte_part(b.final_stacks + (size_t)env * f.stacked_bytes(), f.stacked_bytes()), "final_stack");
  return n;
}

// Bytes of one environment's row (the same for every environment).
CULE_HD uint32_t state_row_bytes(const BatchView& b, bool with_rng) {
  StatePart p[kMaxStateParts];
  const int n = state_parts(b, 0, with_rng, p);
  uint32_t bytes = 0;
  for (int k = 0; k < n; ++k) bytes += p[k].bytes;
  return bytes;
}

// Units first, first + stride, ... of a part from `from` to `to` (same
// shape): one thread does it all with (0, 1), in one go where both are
// contiguous; a block of threads with (threadIdx.x, blockDim.x). Units
// [stale_first, stale_end) are written as all ones instead (a saved cache).
CULE_HD void copy_part(const StatePart& to, const StatePart& from, uint32_t first, uint32_t stride,
                       uint32_t stale_first = 0, uint32_t stale_end = 0) {
  if (stride == 1 && to.contiguous() && from.contiguous()) {
#if CULE_DEVICE_CODE
    memcpy(to.at, from.at, from.bytes);
#else
    __builtin_memcpy(to.at, from.at, from.bytes);
#endif
    for (uint32_t u = stale_first; u < stale_end; ++u)
      for (uint32_t k = 0; k < to.unit; ++k) to.at[(size_t)u * to.unit + k] = 0xFF;
    return;
  }
  for (uint32_t u = first; u < from.units(); u += stride) {
    uint8_t* out = to.at + (size_t)u * to.step;
    const uint8_t* in = from.at + (size_t)u * from.step;
    if (u >= stale_first && u < stale_end) {
      for (uint32_t k = 0; k < to.unit; ++k) out[k] = 0xFF;
    } else if (from.unit == 4) {
      copy_word(out, in);
    } else {
      *out = *in;
    }
  }
}

// Between environment env and `row`: save (env -> row) or load (row -> env).
CULE_HD void transfer_state(const BatchView& b, int env, bool with_rng, uint8_t* row, bool save, uint32_t first,
                            uint32_t stride) {
  StatePart p[kMaxStateParts];
  const int n = state_parts(b, env, with_rng, p);
  for (int k = 0; k < n; ++k) {
    const StatePart in_row = p[k].packed(row);
    if (save) {
      const bool machine = k == kMachinePart;
      copy_part(in_row, p[k], first, stride, machine ? kPlayfieldCacheFirstWord : 0,
                machine ? kPlayfieldCacheEndWord : 0);
    } else {
      copy_part(p[k], in_row, first, stride);
    }
    row += p[k].bytes;
  }
}

// Environment src's state onto environment dst, as a save and a load would,
// without the row. The caller keeps the pairs of one launch apart (no
// environment both a source and a destination, no destination twice).
CULE_HD void fork_state(const BatchView& b, int src, int dst, bool with_rng, uint32_t first, uint32_t stride) {
  StatePart from[kMaxStateParts], to[kMaxStateParts];
  const int n = state_parts(b, src, with_rng, from);
  state_parts(b, dst, with_rng, to);
  for (int k = 0; k < n; ++k) copy_part(to[k], from[k], first, stride);
}

}  // namespace cule
