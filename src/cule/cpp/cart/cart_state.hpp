// What every cartridge mapper shares: the CartType enum, the per-environment
// state CartState, and the helpers of namespace cart. The mappers, one
// header each (or one per family), are gathered by carts.hpp.
//
// A mapper is a struct of static functions over one shared POD, CartState, so
// the console picks a mapper with a template argument or a switch on CartType,
// never a virtual call. All mappers have the same signatures:
//   power_on(s, rng)          constructor + install() state; draws nothing
//   reset(s, rng, cycles)     the mapper's part of System::reset
//   peek(s, rom, a, cycles)   a read with A12 = 1; `a` is the full 16-bit
//   poke(s, rom, a, v, cycles)  CPU address (FE needs A13), `cycles` the
//                             system clock at the access (DPC music needs it)
//   rebase_cycles(s, cycles)  the system clock went back to 0 after `cycles`
//   check_state(s)            a loaded state's fields that index the image:
//                             kCartOk, or what is out of range (CartFault)
// `rom` is the ROM image shared by every environment of a batch, read-only.
//
// Most cart reads are instruction fetches from plain ROM. A mapper names
// them so the bus can skip its peek: a read whose offset (address &
// kOffsetMask) lies in [kDirectLo, kDirectHi) has no side effect and returns
// direct_base(s, rom, page)[offset & page mask], page = offset >> kPageShift
// (12: one page; E0 banks 1K windows), pointers the bus refreshes after every
// access that went through peek or poke (the only ones that switch banks). A
// mapper with kDirectLo == kDirectHi routes every read through peek.
//
// Stella maps some cart pages "direct" (the System reads or writes an array
// without calling the cart) and routes the rest to the cart's peek/poke. Only
// DPC can tell the difference (its RNG is clocked by routed accesses only), so
// the other mappers here simply compute the byte either path would give.
#pragma once

#include "common.hpp"

namespace cule {

enum class CartType : uint8_t {
#define CULE_MAPPER(name, Type) k##name,
#include "cart/mappers.inc"
#undef CULE_MAPPER
};

// Every mapper's per-environment state in one struct; a mapper ignores the
// fields that are not its own. Only 4-byte words and smaller: the device
// keeps consoles in shared memory at an odd word stride (kernels.cu), which
// an 8-byte member's alignment would forbid; the DPC's double is kept as
// its bits.
struct CartState {
  uint32_t music_fraction_bits[2];  // DPC: OSC clocks left over from the last music update (a double)
  uint32_t music_cycles;    // DPC: system clock at the last music update (wraps like Stella's int)
  uint16_t counter[8];      // DPC data fetcher counters, 11 bits
  uint8_t ram[128];         // SuperChip RAM
  uint8_t top[8];           // DPC data fetcher top registers
  uint8_t bottom[8];        // DPC data fetcher bottom registers
  uint8_t flag[8];          // DPC data fetcher flags, $00 or $FF
  uint8_t music[3];         // DPC: fetchers 5-7 in music mode (0 or 1)
  uint8_t random;           // DPC 8-bit LFSR, 1 at power-on
  uint8_t bank;             // F8, F6, F8SC, F6SC, DPC: current 4K bank
  uint8_t slice[3];         // E0: 1K slice in windows 0-2 (window 3 is always slice 7)

  CULE_HD double music_fraction() const {
    double d;
    copy_word(&d, &music_fraction_bits[0]);
    copy_word((char*)&d + 4, &music_fraction_bits[1]);
    return d;
  }
  CULE_HD void set_music_fraction(double d) {
    copy_word(&music_fraction_bits[0], &d);
    copy_word(&music_fraction_bits[1], (const char*)&d + 4);
  }
};

// What check_state finds wrong in a state the mapper never makes (a damaged
// or crafted saved state): values that would index outside the ROM image.
enum CartFault : uint8_t { kCartOk = 0, kCartBadBank = 1, kCartBadFetchers = 2 };

namespace cart {

constexpr uint32_t kBankBytes = 4096;
constexpr uint32_t kSliceBytes = 1024;  // E0

CULE_HD uint16_t offset_of(uint16_t address) { return (uint16_t)(address & 0x0FFF); }

// Whether a read at `offset` (address & Cart::kOffsetMask) may skip the peek.
template <class Cart>
CULE_HD bool is_direct(uint16_t offset) {
  return (uint16_t)(offset - Cart::kDirectLo) < (uint16_t)(Cart::kDirectHi - Cart::kDirectLo);
}

}  // namespace cart

}  // namespace cule
