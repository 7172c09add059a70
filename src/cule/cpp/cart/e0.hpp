#pragma once

#include "cart/cart_state.hpp"

namespace cule {

// E0: four 1K windows. Hotspots $xFE0-$xFE7 / $xFE8-$xFEF / $xFF0-$xFF7 put
// slice (a & 7) in window 0 / 1 / 2, on reads and writes; window 3 is fixed to
// slice 7, which also holds the hotspots, so a hotspot read returns slice 7's
// byte whatever it switched (CartE0.cxx).
struct CartE0 {
  static constexpr uint32_t kRomBytes = 8192;
  // On the host, plain reads are everything below the hotspots, one 1K page
  // per window, whose bases the bus keeps. The device, short of registers
  // for four bases, sends every read through peek.
  static constexpr uint16_t kOffsetMask = 0x0FFF;
  static constexpr uint16_t kDirectLo = 0x0000;
  static constexpr uint16_t kDirectHi = CULE_DEVICE_CODE ? 0x0000 : 0x0FE0;
  static constexpr uint32_t kPageShift = 10;
  CULE_HD static const uint8_t* direct_base(const CartState& s, const uint8_t* rom, uint32_t window) {
    return rom + (window == 3 ? 7u : s.slice[window]) * cart::kSliceBytes;
  }

  CULE_HD static void check_hotspot(CartState& s, uint16_t offset) {
    if (offset >= 0x0FE0 && offset < 0x0FF8) s.slice[(offset - 0x0FE0) >> 3] = (uint8_t)(offset & 7);
  }
  CULE_HD static void select_reset_slices(CartState& s) {
    s.slice[0] = 4;
    s.slice[1] = 5;
    s.slice[2] = 6;
  }

  template <class Rng>
  CULE_HD static void power_on(CartState& s, Rng&) {
    s = CartState{};
    select_reset_slices(s);  // install() sets them too
  }
  template <class Rng>
  CULE_HD static void reset(CartState& s, Rng&, uint32_t) { select_reset_slices(s); }

  CULE_HD static uint8_t peek(CartState& s, const uint8_t* rom, uint16_t address, uint32_t) {
    const uint16_t offset = cart::offset_of(address);
    check_hotspot(s, offset);
    return direct_base(s, rom, offset >> 10)[offset & 0x03FF];
  }
  CULE_HD static void poke(CartState& s, const uint8_t*, uint16_t address, uint8_t, uint32_t) {
    check_hotspot(s, cart::offset_of(address));
  }
  CULE_HD static void rebase_cycles(CartState&, uint32_t) {}
  CULE_HD static uint8_t check_state(const CartState& s) {
    return s.slice[0] < 8 && s.slice[1] < 8 && s.slice[2] < 8 ? kCartOk : kCartBadBank;
  }
};

}  // namespace cule
