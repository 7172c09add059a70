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

// The parts a row can hold, X(id, name), in row order.
#define CULE_STATE_PARTS(X)                                             \
  X(kPartMachine, "machine") X(kPartAle, "ale_state") X(kPartStickyRng, "sticky_rng") \
  X(kPartVector, "vector_state") X(kPartResults, "results") X(kPartBuffers, "tia_buffers") \
  X(kPartCaptures, "captures") X(kPartStack, "stack") X(kPartStackIndex, "stack_index") X(kPartFinalStack, "final_stack")

enum StatePartId : uint8_t {
#define CULE_PART_ENUM(id, name) id,
  CULE_STATE_PARTS(CULE_PART_ENUM)
#undef CULE_PART_ENUM
  kStatePartKinds
};
#if !CULE_DEVICE_CODE
constexpr const char* kStatePartNames[] = {
#define CULE_PART_NAME(id, name) name,
    CULE_STATE_PARTS(CULE_PART_NAME)
#undef CULE_PART_NAME
};
#endif

// One stretch of a state: units of `unit` bytes (4 in a lane array, else 1),
// `step` bytes apart (4 x lanes in a lane array; contiguous: step == unit).
struct StatePart {
  uint8_t* at;
  uint32_t bytes;
  uint32_t unit;
  uint32_t step;
  StatePartId id;

  CULE_HD uint32_t units() const { return bytes / unit; }
  CULE_HD bool contiguous() const { return step == unit; }
  // Its bytes in a row: rounded up to a 4-byte word (zeros after the part), so
  // every part starts on a word of the payload, whatever the observation's
  // size makes of the byte parts.
  CULE_HD uint32_t row_bytes() const { return (bytes + 3u) & ~3u; }
  // The same stretch packed at `to` (a row's bytes).
  CULE_HD StatePart packed(uint8_t* to) const { return StatePart{to, bytes, unit, unit, id}; }
};

template <class T>
CULE_HD StatePart lane_part(const LaneArray<T>& array, int env, StatePartId id) {
  return StatePart{(uint8_t*)array.item(env), (uint32_t)sizeof(T), 4, 4 * array.lanes, id};
}
CULE_HD StatePart byte_part(void* at, uint32_t bytes, StatePartId id) {
  return StatePart{(uint8_t*)at, bytes, 1, 1, id};
}

constexpr int kMaxStateParts = kStatePartKinds;

// Environment env's parts in row order; returns how many. In a row each
// takes row_bytes(), so each starts on a 4-byte word of the payload.
CULE_HD int state_parts(const BatchView& b, int env, bool with_rng, StatePart* p) {
  const EnvFrames f{b, env};
  int n = 0;
  p[n++] = lane_part(b.machines, env, kPartMachine);  // first: check_row reads the console at the row's start
  p[n++] = lane_part(b.envs, env, kPartAle);
  if (with_rng) p[n++] = lane_part(b.rngs, env, kPartStickyRng);
  p[n++] = byte_part(b.vstates + env, (uint32_t)sizeof(VectorState), kPartVector);
  p[n++] = byte_part(b.results + env, (uint32_t)sizeof(EnvResult), kPartResults);
  p[n++] = byte_part(f.buffers(), 2 * b.frame_bytes, kPartBuffers);
  p[n++] = byte_part(f.raw(0), 2 * b.raw_bytes, kPartCaptures);  // raw(0) and raw(1) are adjacent
  p[n++] = byte_part(f.stack(), f.stacked_bytes(), kPartStack);
  p[n++] = byte_part(b.stack_index + env, 4, kPartStackIndex);
  if (b.final_stacks) p[n++] = byte_part(b.final_stacks + (size_t)env * f.stacked_bytes(), f.stacked_bytes(), kPartFinalStack);
  return n;
}
static_assert(sizeof(Machine) % 4 == 0 && sizeof(EnvState) % 4 == 0 && sizeof(Mt19937) % 4 == 0 &&
                  sizeof(VectorState) % 4 == 0 && sizeof(EnvResult) % 4 == 0,
              "a row's parts start on 4-byte words (the digest sums words)");

// Where part `id` starts in a row's payload (every environment's the same),
// or -1 when the row has no such part.
CULE_HD int64_t part_offset(const BatchView& b, bool with_rng, StatePartId id) {
  StatePart p[kMaxStateParts];
  const int n = state_parts(b, 0, with_rng, p);
  int64_t at = 0;
  for (int k = 0; k < n; ++k) {
    if (p[k].id == id) return at;
    at += p[k].row_bytes();
  }
  return -1;
}

// Bytes of one environment's row (the same for every environment).
CULE_HD uint32_t state_row_bytes(const BatchView& b, bool with_rng) {
  StatePart p[kMaxStateParts];
  const int n = state_parts(b, 0, with_rng, p);
  uint32_t bytes = 0;
  for (int k = 0; k < n; ++k) bytes += p[k].row_bytes();
  return bytes;
}

// The digest a row's header holds (cule/state.py): the sum of the payload's
// little-endian 32-bit words, mod 2^64. A flipped bit changes it by a power
// of two, so any one flipped bit is caught; it guards against damage in
// storage or transfer, not against crafted rows (check_row does). A payload
// is whole words (state_row_bytes). `first`, `stride`: a thread's share of
// the words, as in copy_part.
CULE_HD uint64_t row_digest(const uint8_t* payload, uint32_t bytes, uint32_t first = 0, uint32_t stride = 1) {
  uint64_t sum = 0;
  for (uint32_t w = first; w < bytes / 4; w += stride) {
    uint32_t word;
    copy_word(&word, payload + 4 * (size_t)w);
    sum += word;
  }
  return sum;
}

// Units first, first + stride, ... of a part from `from` to `to` (same
// shape): one thread does it all with (0, 1), in one go where both are
// contiguous; a block of threads with (threadIdx.x, blockDim.x). Units
// [stale_first, stale_end) are written as all ones instead (a saved cache).
// When `to` is a row (kSum), also writes the zeros that round the part up to
// a word (row_bytes) and returns the sum of the words written, as row_digest
// counts them.
template <bool kSum = false>
CULE_HD uint64_t copy_part(const StatePart& to, const StatePart& from, uint32_t first, uint32_t stride,
                           uint32_t stale_first = 0, uint32_t stale_end = 0) {
  uint64_t sum = 0;
  if (stride == 1 && to.contiguous() && from.contiguous()) {
    if (kSum) {  // copy and sum in one pass: as fast as the copy alone
      const uint32_t words = from.bytes / 4;
      for (uint32_t w = 0; w < words; ++w) {
        uint32_t word;
        copy_word(&word, from.at + 4 * (size_t)w);
        copy_word(to.at + 4 * (size_t)w, &word);
        sum += word;
      }
      for (uint32_t i = 4 * words; i < from.row_bytes(); ++i) {  // a byte part's last word
        const uint8_t value = i < from.bytes ? from.at[i] : 0;
        to.at[i] = value;
        sum += (uint64_t)value << (8 * (i % 4));
      }
    } else {
#if CULE_DEVICE_CODE
      memcpy(to.at, from.at, from.bytes);
#else
      __builtin_memcpy(to.at, from.at, from.bytes);
#endif
    }
    for (uint32_t u = stale_first; u < stale_end; ++u) {
      for (uint32_t k = 0; k < to.unit; ++k) {
        if (kSum) sum += (uint64_t)(0xFFu - to.at[(size_t)u * to.unit + k]) << (8 * (k % 4));
        to.at[(size_t)u * to.unit + k] = 0xFF;
      }
    }
    return sum;
  }
  // a row's part runs on to the end of its last word (kSum), zeros after the part's units
  const uint32_t end = kSum ? from.row_bytes() / from.unit : from.units();
  for (uint32_t u = first; u < end; u += stride) {
    uint8_t* out = to.at + (size_t)u * to.step;
    const uint8_t* in = from.at + (size_t)u * from.step;
    if (u >= from.units()) {
      *out = 0;  // lane parts are whole words: only a byte part has these
    } else if (u >= stale_first && u < stale_end) {
      for (uint32_t k = 0; k < to.unit; ++k) out[k] = 0xFF;
    } else if (from.unit == 4) {
      copy_word(out, in);
    } else {
      *out = *in;
    }
    if (kSum) {
      if (to.unit == 4) {
        uint32_t word;
        copy_word(&word, out);
        sum += word;
      } else {
        sum += (uint64_t)*out << (8 * (u % 4));  // the part starts on a word (state_parts)
      }
    }
  }
  return sum;
}

// Between environment env and `row`: save (env -> row) or load (row -> env).
// A save returns this thread's share of the row's digest (row_digest). A
// load writes the console's playfield cache stale whatever the row holds, as
// a save does: the cache is only ever rebuilt from the playfield registers.
CULE_HD uint64_t transfer_state(const BatchView& b, int env, bool with_rng, uint8_t* row, bool save, uint32_t first,
                                uint32_t stride) {
  StatePart p[kMaxStateParts];
  const int n = state_parts(b, env, with_rng, p);
  uint64_t digest = 0;
  for (int k = 0; k < n; ++k) {
    const StatePart in_row = p[k].packed(row);
    const bool machine = p[k].id == kPartMachine;
    const uint32_t stale_first = machine ? kPlayfieldCacheFirstWord : 0, stale_end = machine ? kPlayfieldCacheEndWord : 0;
    if (save) {
      digest += copy_part<true>(in_row, p[k], first, stride, stale_first, stale_end);
    } else {
      copy_part(p[k], in_row, first, stride, stale_first, stale_end);
    }
    row += p[k].row_bytes();
  }
  return digest;
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
