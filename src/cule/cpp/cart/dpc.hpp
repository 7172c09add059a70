#pragma once

#include "cart/cart_state.hpp"

namespace cule {

// DPC (Pitfall II): two 4K program banks (hotspots $xFF8/$xFF9 as F8), a 2K
// display ROM at image offset 8192 read through eight data fetchers, and an
// 8-bit LFSR (CartDPC.cxx).
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
  static constexpr uint32_t kPageShift = 12;
  CULE_HD static const uint8_t* direct_base(const CartState& s, const uint8_t* rom, uint32_t) {
    return rom + s.bank * cart::kBankBytes;
  }

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
  // Two banks; counters of 11 bits (they index the 2K display ROM); the
  // music fraction left by update_music, in (-1, 1) (a NaN fails too), so
  // the next update's truncation to int is defined.
  CULE_HD static uint8_t check_state(const CartState& s) {
    if (s.bank > 1) return kCartBadBank;
    for (uint16_t c : s.counter)
      if (c > 0x07FF) return kCartBadFetchers;
    const double fraction = s.music_fraction();
    return fraction > -1.0 && fraction < 1.0 ? kCartOk : kCartBadFetchers;
  }
};

}  // namespace cule
