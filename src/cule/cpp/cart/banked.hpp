// F8, F6, F8SC and F6SC: one template and its four instances.
#pragma once

#include "cart/cart_state.hpp"

namespace cule {

namespace cart {

// F8 / F6 and their SuperChip variants: 4K banks chosen by a run of
// consecutive hotspots ending at $xFF9. A hotspot is any access, read or
// write, whose address & $FFF matches, at any mirror ($FFF8, $3FF8, ...); the
// bank changes before a read returns, so a hotspot read yields the new bank's
// byte (CartF8.cxx, CartF6.cxx: peek and poke).
template <uint32_t kBanks, uint16_t kFirstHotspot, uint8_t kResetBank, bool kSuperChip>
struct Banked {
  static constexpr uint32_t kRomBytes = kBanks * kBankBytes;
  static constexpr uint16_t kOffsetMask = 0x0FFF;
  static constexpr uint16_t kDirectLo = kSuperChip ? 0x0100 : 0x0000;  // above the SuperChip ports
  static constexpr uint16_t kDirectHi = kFirstHotspot;

  static constexpr uint32_t kPageShift = 12;
  CULE_HD static const uint8_t* direct_base(const CartState& s, const uint8_t* rom, uint32_t) {
    return rom + s.bank * kBankBytes;
  }

  CULE_HD static void check_hotspot(CartState& s, uint16_t offset) {
    if (offset >= kFirstHotspot && offset < kFirstHotspot + kBanks) s.bank = (uint8_t)(offset - kFirstHotspot);
  }

  // install() maps the reset bank already; SuperChip RAM stays unfilled until
  // the first reset, which always comes before the CPU runs (CartF8SC.cxx, CartF6SC.cxx).
  template <class Rng>
  CULE_HD static void power_on(CartState& s, Rng&) {
    s = CartState{};
    s.bank = kResetBank;
  }

  // SuperChip RAM takes 128 draws, index order, low byte of each (CartF8SC::reset, Random.cxx);
  // they follow the RIOT timer draw because the cart resets after the RIOT.
  template <class Rng>
  CULE_HD static void reset(CartState& s, Rng& rng, uint32_t) {
    if constexpr (kSuperChip) {
      for (uint32_t i = 0; i < 128; ++i) s.ram[i] = (uint8_t)(rng.next() & 0xFF);
    }
    s.bank = kResetBank;
  }

  CULE_HD static uint8_t peek(CartState& s, const uint8_t* rom, uint16_t address, uint32_t) {
    const uint16_t offset = offset_of(address);
    // Read port $1080-$10FF: a direct page onto the RAM.
    if (kSuperChip && offset >= 0x80 && offset < 0x100) return s.ram[offset & 0x7F];
    // Everything else, the write port $1000-$107F included, reads ROM: Stella
    // sends write-port reads to peek(), which returns the current bank's ROM
    // byte and leaves the RAM alone (CartF8SC::poke).
    check_hotspot(s, offset);
    return rom[s.bank * kBankBytes + offset];
  }

  CULE_HD static void poke(CartState& s, const uint8_t*, uint16_t address, uint8_t value, uint32_t) {
    const uint16_t offset = offset_of(address);
    // Write port $1000-$107F: a direct page onto the RAM. A write to the read
    // port lands in poke(), which only checks hotspots: no effect.
    if (kSuperChip && offset < 0x80) {
      s.ram[offset] = value;
      return;
    }
    check_hotspot(s, offset);  // ROM itself is never written
  }

  CULE_HD static void rebase_cycles(CartState&, uint32_t) {}
  CULE_HD static uint8_t check_state(const CartState& s) { return s.bank < kBanks ? kCartOk : kCartBadBank; }
};

}  // namespace cart

// Reset banks: F8 1 (the "swapped" F8 md5s with reset bank 0 are not among
// the 108 ROMs), F6 0, the SuperChip variants as their base (each mapper's reset).
struct CartF8 : cart::Banked<2, 0x0FF8, 1, false> {};
struct CartF6 : cart::Banked<4, 0x0FF6, 0, false> {};
struct CartF8SC : cart::Banked<2, 0x0FF8, 1, true> {};
struct CartF6SC : cart::Banked<4, 0x0FF6, 0, true> {};

}  // namespace cule
