// 2K, 4K and FE (Robotank): the mappers that switch nothing.
#pragma once

#include "cart/cart_state.hpp"

namespace cule {

namespace cart {

// Mappers without any bank state: a fixed mapping from address to image byte.
template <uint32_t kBytes>
struct Fixed {
  static constexpr uint32_t kRomBytes = kBytes;
  static constexpr uint16_t kOffsetMask = (uint16_t)((kBytes < kBankBytes ? kBytes : kBankBytes) - 1);
  static constexpr uint16_t kDirectLo = 0x0000;
  static constexpr uint16_t kDirectHi = kBytes <= kBankBytes ? kOffsetMask + 1 : 0;  // FE: A13 picks the half

  static constexpr uint32_t kPageShift = 12;
  CULE_HD static const uint8_t* direct_base(const CartState&, const uint8_t* rom, uint32_t) { return rom; }

  template <class Rng>
  CULE_HD static void power_on(CartState& s, Rng&) { s = CartState{}; }
  template <class Rng>
  CULE_HD static void reset(CartState&, Rng&, uint32_t) {}
  CULE_HD static void poke(CartState&, const uint8_t*, uint16_t, uint8_t, uint32_t) {}  // ROM
  CULE_HD static void rebase_cycles(CartState&, uint32_t) {}
  CULE_HD static uint8_t check_state(const CartState&) { return kCartOk; }  // no field indexes the image
};

}  // namespace cart

// 2K: mirrored twice across the 4K cart space.
struct Cart2K : cart::Fixed<2048> {
  CULE_HD static uint8_t peek(CartState&, const uint8_t* rom, uint16_t address, uint32_t) {
    return rom[address & 0x07FF];
  }
};

struct Cart4K : cart::Fixed<4096> {
  CULE_HD static uint8_t peek(CartState&, const uint8_t* rom, uint16_t address, uint32_t) {
    return rom[cart::offset_of(address)];
  }
};

// FE (Robotank): ALE ignores the $01FE/$01FF stack snooping of the real
// hardware; the 4K half is chosen by A13 of the full 16-bit address alone,
// A13 = 1 ($Fxxx) the first half of the file, A13 = 0 ($Dxxx) the second.
// So the reset vector at $FFFC comes from the first half (CartFE.cxx).
struct CartFE : cart::Fixed<8192> {
  CULE_HD static uint8_t peek(CartState&, const uint8_t* rom, uint16_t address, uint32_t) {
    return rom[cart::offset_of(address) + ((address & 0x2000) ? 0 : cart::kBankBytes)];
  }
};

}  // namespace cule
