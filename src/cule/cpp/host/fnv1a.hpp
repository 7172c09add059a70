// FNV-1a, 64 bits: the hash the standalone drivers (the fuzzer, the simt
// replay) print of what they emulated, so a run can be compared with another
// or with the Python package (which computes the same function) without
// dumping every byte.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cule {

struct Fnv1a {
  static constexpr uint64_t kOffsetBasis = 0xcbf29ce484222325ull;
  static constexpr uint64_t kPrime = 0x100000001b3ull;
  uint64_t hash = kOffsetBasis;
  void mix(const void* data, size_t bytes) {
    const uint8_t* b = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < bytes; ++i) hash = (hash ^ b[i]) * kPrime;
  }
};

}  // namespace cule
