// std::mt19937, host and device: ALE draws sticky-action numbers from one per
// environment (seeded at loadROM), so every environment carries its own.
#pragma once

#include "common.hpp"

namespace cule {

// One generator's words: the 624 state words, then the index.
struct Mt19937 {
  static constexpr int kN = 624, kM = 397;
  uint32_t words[kN + 1];
};

// The generator's operations over its words `stride` words apart: 1 for a
// Mt19937 struct, the lane count for its slot in a lane array (common.hpp),
// where the device keeps the sticky-action generators, so that drawing
// touches two words of global memory instead of a 2.5 KB working copy.
struct MtStream {
  uint32_t* words;
  uint32_t stride;

  CULE_HD uint32_t& at(int i) const { return words[(size_t)i * stride]; }
  CULE_HD uint32_t& index() const { return at(Mt19937::kN); }

  CULE_HD void seed(uint32_t s) const {
    at(0) = s;
    for (int i = 1; i < Mt19937::kN; ++i) at(i) = 1812433253u * (at(i - 1) ^ (at(i - 1) >> 30)) + (uint32_t)i;
    index() = Mt19937::kN;
  }

  CULE_HD void twist() const {
    constexpr int kN = Mt19937::kN, kM = Mt19937::kM;
    for (int i = 0; i < kN; ++i) {
      const uint32_t y = (at(i) & 0x80000000u) | (at((i + 1) % kN) & 0x7FFFFFFFu);
      at(i) = at((i + kM) % kN) ^ (y >> 1) ^ ((y & 1u) ? 0x9908B0DFu : 0u);
    }
    index() = 0;
  }

  CULE_HD uint32_t next() const {
    if (index() >= (uint32_t)Mt19937::kN) twist();
    uint32_t y = at(index()++);
    y ^= y >> 11;
    y ^= (y << 7) & 0x9D2C5680u;
    y ^= (y << 15) & 0xEFC60000u;
    return y ^ (y >> 18);
  }

  // ALE's Random::nextDouble: a 32-bit draw divided by 2^32.
  CULE_HD double next_double() const { return next() / 4294967296.0; }

  // Whether `draws` more draws would regenerate the state words.
  CULE_HD bool twists_within(uint32_t draws) const { return index() + draws > (uint32_t)Mt19937::kN; }
  // Copies the words (all of them, or only the index) to `to`.
  CULE_HD void copy_to(const MtStream& to, bool whole) const {
    if (whole)
      for (int i = 0; i < Mt19937::kN; ++i) to.at(i) = at(i);
    to.index() = index();
  }
};

CULE_HD MtStream stream_of(Mt19937& g) { return MtStream{g.words, 1}; }

}  // namespace cule
