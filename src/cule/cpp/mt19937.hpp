// std::mt19937, host and device: ALE draws sticky-action numbers from one per
// environment (seeded at loadROM), so every environment carries its own.
#pragma once

#include "common.hpp"

namespace cule {

struct Mt19937 {
  static constexpr int kN = 624, kM = 397;
  uint32_t state[kN];
  uint32_t index;

  CULE_HD void seed(uint32_t s) {
    state[0] = s;
    for (int i = 1; i < kN; ++i) state[i] = 1812433253u * (state[i - 1] ^ (state[i - 1] >> 30)) + (uint32_t)i;
    index = kN;
  }

  CULE_HD void twist() {
    for (int i = 0; i < kN; ++i) {
      const uint32_t y = (state[i] & 0x80000000u) | (state[(i + 1) % kN] & 0x7FFFFFFFu);
      state[i] = state[(i + kM) % kN] ^ (y >> 1) ^ ((y & 1u) ? 0x9908B0DFu : 0u);
    }
    index = 0;
  }

  CULE_HD uint32_t next() {
    if (index >= (uint32_t)kN) twist();
    uint32_t y = state[index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9D2C5680u;
    y ^= (y << 15) & 0xEFC60000u;
    return y ^ (y >> 18);
  }

  // ALE's Random::nextDouble: a 32-bit draw divided by 2^32.
  CULE_HD double next_double() { return next() / 4294967296.0; }
};

}  // namespace cule
