// The cartridge mappers of ALE's 108 ROMs, as Stella (vendored by ALE) maps
// them: 2K 4K F8 F6 F8SC F6SC E0 FE DPC (facts: the console
// digest's section 4; draws from the system RNG, section 2.4).
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
// `rom` is the ROM image shared by every environment of a batch, read-only.
//
// Most cart reads are instruction fetches from plain ROM. A mapper names
// them so the bus can skip its peek: a read whose offset (address &
// kOffsetMask) lies in [kDirectLo, kDirectHi) has no side effect and returns
// direct_base(s, rom)[offset], a pointer the bus refreshes after every access
// that went through peek or poke (the only ones that switch banks). A mapper
// with kDirectLo == kDirectHi routes every read through peek.
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
#include "mappers.inc"
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

namespace cart {

constexpr uint32_t kBankBytes = 4096;
constexpr uint32_t kSliceBytes = 1024;  // E0

CULE_HD uint16_t offset_of(uint16_t address) { return (uint16_t)(address & 0x0FFF); }

// Whether a read at `offset` (address & Cart::kOffsetMask) may skip the peek.
template <class Cart>
CULE_HD bool is_direct(uint16_t offset) {
  return (uint16_t)(offset - Cart::kDirectLo) < (uint16_t)(Cart::kDirectHi - Cart::kDirectLo);
}

// F8 / F6 and their SuperChip variants: 4K banks chosen by a run of
// consecutive hotspots ending at $xFF9. A hotspot is any access, read or
// write, whose address & $FFF matches, at any mirror ($FFF8, $3FF8, ...); the
// bank changes before a read returns, so a hotspot read yields the new bank's
// byte (section 4.1).
template <uint32_t kBanks, uint16_t kFirstHotspot, uint8_t kResetBank, bool kSuperChip>
struct Banked {
  static constexpr uint32_t kRomBytes = kBanks * kBankBytes;
  static constexpr uint16_t kOffsetMask = 0x0FFF;
  static constexpr uint16_t kDirectLo = kSuperChip ? 0x0100 : 0x0000;  // above the SuperChip ports
  static constexpr uint16_t kDirectHi = kFirstHotspot;

  CULE_HD static const uint8_t* direct_base(const CartState& s, const uint8_t* rom) { return rom + s.bank * kBankBytes; }

  CULE_HD static void check_hotspot(CartState& s, uint16_t offset) {
    if (offset >= kFirstHotspot && offset < kFirstHotspot + kBanks) s.bank = (uint8_t)(offset - kFirstHotspot);
  }

  // install() maps the reset bank already; SuperChip RAM stays unfilled until
  // the first reset, which always comes before the CPU runs (section 4.4).
  template <class Rng>
  CULE_HD static void power_on(CartState& s, Rng&) {
    s = CartState{};
    s.bank = kResetBank;
  }

  // SuperChip RAM takes 128 draws, index order, low byte of each (section 2.4);
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
    // byte and leaves the RAM alone (section 4.4).
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
};

// Mappers without any bank state: a fixed mapping from address to image byte.
template <uint32_t kBytes>
struct Fixed {
  static constexpr uint32_t kRomBytes = kBytes;
  static constexpr uint16_t kOffsetMask = (uint16_t)((kBytes < kBankBytes ? kBytes : kBankBytes) - 1);
  static constexpr uint16_t kDirectLo = 0x0000;
  static constexpr uint16_t kDirectHi = kBytes <= kBankBytes ? kOffsetMask + 1 : 0;  // FE: A13 picks the half

  CULE_HD static const uint8_t* direct_base(const CartState&, const uint8_t* rom) { return rom; }

  template <class Rng>
  CULE_HD static void power_on(CartState& s, Rng&) { s = CartState{}; }
  template <class Rng>
  CULE_HD static void reset(CartState&, Rng&, uint32_t) {}
  CULE_HD static void poke(CartState&, const uint8_t*, uint16_t, uint8_t, uint32_t) {}  // ROM
  CULE_HD static void rebase_cycles(CartState&, uint32_t) {}
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
// So the reset vector at $FFFC comes from the first half (section 4.5).
struct CartFE : cart::Fixed<8192> {
  CULE_HD static uint8_t peek(CartState&, const uint8_t* rom, uint16_t address, uint32_t) {
    return rom[cart::offset_of(address) + ((address & 0x2000) ? 0 : cart::kBankBytes)];
  }
};

// Reset banks: F8 1 (the "swapped" F8 md5s with reset bank 0 are not among
// the 108 ROMs), F6 0, the SuperChip variants as their base (section 4.1).
struct CartF8 : cart::Banked<2, 0x0FF8, 1, false> {};
struct CartF6 : cart::Banked<4, 0x0FF6, 0, false> {};
struct CartF8SC : cart::Banked<2, 0x0FF8, 1, true> {};
struct CartF6SC : cart::Banked<4, 0x0FF6, 0, true> {};

// E0: four 1K windows. Hotspots $xFE0-$xFE7 / $xFE8-$xFEF / $xFF0-$xFF7 put
// slice (a & 7) in window 0 / 1 / 2, on reads and writes; window 3 is fixed to
// slice 7, which also holds the hotspots, so a hotspot read returns slice 7's
// byte whatever it switched (section 4.5).
struct CartE0 {
  static constexpr uint32_t kRomBytes = 8192;
  // Four windows of different slices: no single base, so every read is a peek.
  static constexpr uint16_t kOffsetMask = 0x0FFF;
  static constexpr uint16_t kDirectLo = 0x0000;
  static constexpr uint16_t kDirectHi = 0x0000;
  CULE_HD static const uint8_t* direct_base(const CartState&, const uint8_t* rom) { return rom; }

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
    const uint32_t window = offset >> 10;
    const uint32_t slice = window == 3 ? 7u : s.slice[window];
    return rom[slice * cart::kSliceBytes + (offset & 0x03FF)];
  }
  CULE_HD static void poke(CartState& s, const uint8_t*, uint16_t address, uint8_t, uint32_t) {
    check_hotspot(s, cart::offset_of(address));
  }
  CULE_HD static void rebase_cycles(CartState&, uint32_t) {}
};

// DPC (Pitfall II): two 4K program banks (hotspots $xFF8/$xFF9 as F8), a 2K
// display ROM at image offset 8192 read through eight data fetchers, and an
// 8-bit LFSR (section 4.6).
//
// Which accesses reach the DPC device, and so clock its LFSR, in Stella:
//  - reads: only $1000-$107F (fetcher registers) and $1FC0-$1FFF (hotspot
//    page, which holds the vectors). $1080-$1FBF are direct-read pages onto
//    the current bank and never reach the device;
//  - writes: EVERY cart address. CartDPC::bank() installs $1080-$1FBF with a
//    direct read pointer but a null direct write pointer and the cart as
//    device, and System::poke calls the device whenever the write pointer is
//    null. So a write anywhere in $1000-$1FFF clocks the LFSR. (The facts doc
//    calls $1080-$1FBF "direct"; that holds for reads only.)
struct CartDPC {
  static constexpr uint32_t kRomBytes = 8192 + 2048;  // the 10495-byte file's tail is unused
  static constexpr uint32_t kDisplayOffset = 8192;
  // The music clock: a 15750 Hz oscillator against the 1193191.66666667 Hz CPU
  // clock, as Stella writes the constants.
  static constexpr double kOscHz = 15750.0;
  static constexpr double kCpuHz = 1193191.66666667;
  // The direct-read pages below (the device never sees them).
  static constexpr uint16_t kOffsetMask = 0x0FFF;
  static constexpr uint16_t kDirectLo = 0x0080;
  static constexpr uint16_t kDirectHi = 0x0FC0;
  CULE_HD static const uint8_t* direct_base(const CartState& s, const uint8_t* rom) { return rom + s.bank * cart::kBankBytes; }

  template <class Rng>
  CULE_HD static void power_on(CartState& s, Rng&) {
    s = CartState{};  // registers, flags, music mode, music clock all 0
    s.random = 1;     // the LFSR must start non-zero
    s.bank = 1;       // install() maps bank 1
  }

  // Only the bank and the music clock: the fetcher registers and the LFSR
  // carry across resets (reset_game included).
  template <class Rng>
  CULE_HD static void reset(CartState& s, Rng&, uint32_t cycles) {
    s.music_cycles = cycles;
    s.set_music_fraction(0.0);
    s.bank = 1;
  }

  // Stella's shift register: the new bit 0 is NOT(b7 ^ b5 ^ b4 ^ b3).
  CULE_HD static void clock_random(CartState& s) {
    const uint8_t r = s.random;
    const uint8_t parity = (uint8_t)(((r >> 7) ^ (r >> 5) ^ (r >> 4) ^ (r >> 3)) & 1);
    s.random = (uint8_t)((r << 1) | (parity ^ 1));
  }

  CULE_HD static void check_hotspot(CartState& s, uint16_t offset) {
    if (offset == 0x0FF8 || offset == 0x0FF9) s.bank = (uint8_t)(offset - 0x0FF8);
  }

  // Advances the music fetchers 5-7 by the oscillator ticks since the last
  // update. Same operations in the same order as Stella, in double precision,
  // so the fraction kept between updates is bit-identical (one IEEE divide
  // and one add: nothing nvcc could contract into an FMA).
  CULE_HD static void update_music(CartState& s, uint32_t cycles) {
    // Stella keeps the saved clock in an int; the 32-bit wrap gives the same delta.
    const int32_t elapsed = (int32_t)(cycles - s.music_cycles);
    s.music_cycles = cycles;
    const double clocks = (kOscHz * (double)elapsed) / kCpuHz + s.music_fraction();
    const int32_t whole = (int32_t)clocks;  // truncates toward zero, as (int)
    s.set_music_fraction(clocks - (double)whole);
    if (whole <= 0) return;
    for (uint32_t i = 5; i < 8; ++i) {
      if (!s.music[i - 5]) continue;
      int32_t low = s.counter[i] & 0xFF;
      if (s.top[i] != 0) {
        const int32_t period = s.top[i] + 1;
        low -= whole % period;
        if (low < 0) low += period;
      } else {
        low = 0;
      }
      if (low <= s.bottom[i]) {
        s.flag[i] = 0x00;
      } else if (low <= s.top[i]) {
        s.flag[i] = 0xFF;
      }
      s.counter[i] = (uint16_t)((s.counter[i] & 0x0700) | low);
    }
  }

  // Reads of $1000-$103F: fetcher i = a & 7, function (a >> 3) & 7.
  CULE_HD static uint8_t read_fetcher(CartState& s, const uint8_t* rom, uint16_t offset, uint32_t cycles) {
    const uint32_t i = offset & 7;
    const uint8_t low = (uint8_t)(s.counter[i] & 0xFF);
    if (low == s.top[i]) {
      s.flag[i] = 0xFF;
    } else if (low == s.bottom[i]) {
      s.flag[i] = 0x00;
    }
    const uint8_t* display = rom + kDisplayOffset;
    uint8_t result = 0;  // functions 3-6 read 0
    switch ((offset >> 3) & 7) {
      case 0:
        if (i < 4) {
          result = s.random;  // already clocked by this very access
        } else {
          update_music(s, cycles);
          // Stella's amplitude table {0,4,5,9,6,$A,$B,$F} is the sum of
          // 4 / 5 / 6 for each music fetcher 5 / 6 / 7 whose flag is set.
          for (uint32_t m = 0; m < 3; ++m) {
            if (s.music[m] && s.flag[5 + m]) result = (uint8_t)(result + 4 + m);
          }
        }
        break;
      case 1: result = display[2047 - s.counter[i]]; break;
      case 2: result = (uint8_t)(display[2047 - s.counter[i]] & s.flag[i]); break;
      case 7: result = s.flag[i]; break;
      default: break;
    }
    // Every read of the range steps the counter, random-number reads
    // included; only fetchers 5-7 in music mode are left to the oscillator.
    if (i < 5 || !s.music[i - 5]) s.counter[i] = (uint16_t)((s.counter[i] - 1) & 0x07FF);
    return result;
  }

  // Writes to $1040-$107F: fetcher i = a & 7, function (a >> 3) & 7.
  CULE_HD static void write_fetcher(CartState& s, uint16_t offset, uint8_t value) {
    const uint32_t i = offset & 7;
    const bool music = i >= 5 && s.music[i - 5];
    switch ((offset >> 3) & 7) {
      case 0:
        s.top[i] = value;
        s.flag[i] = 0x00;
        break;
      case 1: s.bottom[i] = value; break;
      case 2:
        // A music-mode fetcher reloads its low counter from top, not from the value.
        s.counter[i] = (uint16_t)((s.counter[i] & 0x0700) | (music ? s.top[i] : value));
        break;
      case 3:
        s.counter[i] = (uint16_t)(((value & 0x07) << 8) | (s.counter[i] & 0x00FF));
        if (i >= 5) s.music[i - 5] = (value & 0x10) ? 1 : 0;
        break;
      case 6: s.random = 1; break;
      default: break;  // 4, 5, 7: nothing
    }
  }

  CULE_HD static uint8_t peek(CartState& s, const uint8_t* rom, uint16_t address, uint32_t cycles) {
    const uint16_t offset = cart::offset_of(address);
    // Direct-read pages: the device does not see these, so no LFSR clock.
    if (offset >= 0x0080 && offset < 0x0FC0) return rom[s.bank * cart::kBankBytes + offset];
    clock_random(s);  // first, before the access does anything else
    if (offset < 0x0040) return read_fetcher(s, rom, offset, cycles);
    check_hotspot(s, offset);
    return rom[s.bank * cart::kBankBytes + offset];
  }

  CULE_HD static void poke(CartState& s, const uint8_t*, uint16_t address, uint8_t value, uint32_t) {
    const uint16_t offset = cart::offset_of(address);
    clock_random(s);  // every cart write reaches the device (see above)
    if (offset >= 0x0040 && offset < 0x0080) {
      write_fetcher(s, offset, value);
    } else {
      check_hotspot(s, offset);  // $1000-$103F writes do nothing else
    }
  }

  CULE_HD static void rebase_cycles(CartState& s, uint32_t cycles) { s.music_cycles -= cycles; }
};

}  // namespace cule
