// C++ checks of the cartridge mappers against Stella's Cart*.cxx (bank
// hotspots, reset banks, SuperChip RAM drawn from Random.cxx), on synthetic ROM images:
// no ALE ROM is needed.
#include <cstdio>
#include <cstring>
#include <vector>

#include "cart/carts.hpp"

using namespace cule;

static int g_failures = 0;
#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) {                                                      \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                     \
    }                                                                   \
  } while (0)

// Counts its draws; the low byte of draw k is (k + 0x40) & $FF, and the high
// bytes are junk that must be dropped.
struct CountingRng {
  uint32_t draws = 0;
  uint32_t next() { return 0xABCD1200u | ((0x40 + draws++) & 0xFF); }
};
static uint8_t draw_low_byte(uint32_t k) { return (uint8_t)(0x40 + k); }

// Each 4K bank (or 1K slice) filled with its number; `tag` marks one offset
// per unit with a distinct byte so a test can tell which offset was read.
static std::vector<uint8_t> banked_image(uint32_t units, uint32_t unit_bytes) {
  std::vector<uint8_t> rom(units * unit_bytes);
  for (uint32_t i = 0; i < rom.size(); ++i) rom[i] = (uint8_t)(i / unit_bytes);
  return rom;
}

static void test_2k_4k() {
  std::vector<uint8_t> rom(2048);
  for (uint32_t i = 0; i < rom.size(); ++i) rom[i] = (uint8_t)(i * 7 + 3);
  CartState s;
  CountingRng rng;
  Cart2K::power_on(s, rng);
  Cart2K::reset(s, rng, 0);
  CHECK(Cart2K::peek(s, rom.data(), 0x1000, 0) == rom[0]);
  CHECK(Cart2K::peek(s, rom.data(), 0x1800, 0) == rom[0]);  // mirrored: a & $7FF
  CHECK(Cart2K::peek(s, rom.data(), 0xFFFC, 0) == rom[0x7FC]);
  Cart2K::poke(s, rom.data(), 0x1234, 0x99, 0);
  CHECK(Cart2K::peek(s, rom.data(), 0x1234, 0) == rom[0x234]);

  std::vector<uint8_t> rom4(4096);
  for (uint32_t i = 0; i < rom4.size(); ++i) rom4[i] = (uint8_t)(i ^ (i >> 8));
  Cart4K::power_on(s, rng);
  Cart4K::reset(s, rng, 0);
  CHECK(Cart4K::peek(s, rom4.data(), 0x1ABC, 0) == rom4[0xABC]);
  CHECK(Cart4K::peek(s, rom4.data(), 0xFFFD, 0) == rom4[0xFFD]);
  CHECK(rng.draws == 0);
}

static void test_f8_f6() {
  std::vector<uint8_t> rom = banked_image(2, 4096);
  CartState s;
  CountingRng rng;
  CartF8::power_on(s, rng);
  CHECK(CartF8::peek(s, rom.data(), 0x1000, 0) == 1);  // install maps bank 1
  CartF8::reset(s, rng, 0);
  CHECK(CartF8::peek(s, rom.data(), 0x1FFC, 0) == 1);  // reset bank 1
  // A hotspot read switches first and returns the new bank's byte.
  CHECK(CartF8::peek(s, rom.data(), 0x1FF8, 0) == 0);
  CHECK(CartF8::peek(s, rom.data(), 0x1500, 0) == 0);
  CHECK(CartF8::peek(s, rom.data(), 0x1FF9, 0) == 1);
  // Hotspots compare a & $FFF: mirrors at $3xxx, $Fxxx switch too; writes switch.
  CHECK(CartF8::peek(s, rom.data(), 0xFFF8, 0) == 0);
  CartF8::poke(s, rom.data(), 0x3FF9, 0x00, 0);
  CHECK(CartF8::peek(s, rom.data(), 0x1000, 0) == 1);
  CartF8::poke(s, rom.data(), 0x1FF8, 0x00, 0);
  CHECK(CartF8::peek(s, rom.data(), 0x1000, 0) == 0);
  // Neighbours of the hotspots do nothing.
  CHECK(CartF8::peek(s, rom.data(), 0x1FF7, 0) == 0);
  CHECK(CartF8::peek(s, rom.data(), 0x1FFA, 0) == 0);
  CartF8::reset(s, rng, 0);
  CHECK(CartF8::peek(s, rom.data(), 0x1000, 0) == 1);

  std::vector<uint8_t> rom6 = banked_image(4, 4096);
  CartF6::power_on(s, rng);
  CHECK(CartF6::peek(s, rom6.data(), 0x1000, 0) == 0);
  for (uint16_t b = 0; b < 4; ++b) {
    CHECK(CartF6::peek(s, rom6.data(), (uint16_t)(0x1FF6 + b), 0) == b);
    CHECK(CartF6::peek(s, rom6.data(), 0x1100, 0) == b);
  }
  CartF6::poke(s, rom6.data(), 0xDFF7, 0xFF, 0);
  CHECK(CartF6::peek(s, rom6.data(), 0x1100, 0) == 1);
  CHECK(CartF6::peek(s, rom6.data(), 0x1FF5, 0) == 1);
  CHECK(CartF6::peek(s, rom6.data(), 0x1FFA, 0) == 1);
  CartF6::reset(s, rng, 0);
  CHECK(CartF6::peek(s, rom6.data(), 0x1100, 0) == 0);
  CHECK(rng.draws == 0);
}

template <class Cart>
static void check_superchip(uint8_t reset_bank, uint32_t banks) {
  std::vector<uint8_t> rom = banked_image(banks, 4096);
  CartState s;
  CountingRng rng;
  Cart::power_on(s, rng);
  CHECK(rng.draws == 0);  // the constructor does not fill the RAM
  rng.draws = 5;
  Cart::reset(s, rng, 0);
  CHECK(rng.draws == 5 + 128);  // 128 draws, index order, low bytes
  bool refill_ok = true;
  for (uint32_t i = 0; i < 128; ++i) refill_ok &= s.ram[i] == draw_low_byte(5 + i);
  CHECK(refill_ok);
  CHECK(Cart::peek(s, rom.data(), 0x1FFC, 0) == reset_bank);
  // Read port $1080-$10FF reads the RAM, write port $1000-$107F writes it.
  CHECK(Cart::peek(s, rom.data(), 0x1085, 0) == draw_low_byte(5 + 5));
  Cart::poke(s, rom.data(), 0x1005, 0x77, 0);
  CHECK(Cart::peek(s, rom.data(), 0x1085, 0) == 0x77);
  CHECK(Cart::peek(s, rom.data(), 0xF0FF, 0) == draw_low_byte(5 + 127));  // mirror of $10FF
  // A read of the write port returns the current bank's ROM, RAM untouched.
  CHECK(Cart::peek(s, rom.data(), 0x1005, 0) == reset_bank);
  CHECK(s.ram[5] == 0x77);
  // A write to the read port does nothing.
  Cart::poke(s, rom.data(), 0x1085, 0x11, 0);
  CHECK(s.ram[5] == 0x77);
  CHECK(Cart::peek(s, rom.data(), 0x1085, 0) == 0x77);
  // ROM from $1100; the hotspot switch also changes what the write port reads.
  CHECK(Cart::peek(s, rom.data(), 0x1100, 0) == reset_bank);
  const uint8_t other_bank = reset_bank == 0 ? 1 : 0;
  const uint16_t other_hotspot = (uint16_t)((banks == 2 ? 0x1FF8 : 0x1FF6) + other_bank);
  CHECK(Cart::peek(s, rom.data(), other_hotspot, 0) == other_bank);
  CHECK(Cart::peek(s, rom.data(), 0x1005, 0) == other_bank);
  CHECK(Cart::peek(s, rom.data(), 0x1100, 0) == other_bank);
  CHECK(s.ram[5] == 0x77);
  // Reset refills the RAM and selects the reset bank again.
  Cart::reset(s, rng, 0);
  CHECK(rng.draws == 5 + 256);
  CHECK(s.ram[5] == draw_low_byte(5 + 128 + 5));
  CHECK(Cart::peek(s, rom.data(), 0x1100, 0) == reset_bank);
}

static void test_e0() {
  std::vector<uint8_t> rom = banked_image(8, 1024);
  CartState s;
  CountingRng rng;
  CartE0::power_on(s, rng);
  CHECK(CartE0::peek(s, rom.data(), 0x1000, 0) == 4);
  CHECK(CartE0::peek(s, rom.data(), 0x1400, 0) == 5);
  CHECK(CartE0::peek(s, rom.data(), 0x1800, 0) == 6);
  CHECK(CartE0::peek(s, rom.data(), 0x1C00, 0) == 7);
  CHECK(CartE0::peek(s, rom.data(), 0x1FFF, 0) == 7);
  // Window 0 from $xFE0-$xFE7; the hotspot itself is in window 3 (slice 7).
  CHECK(CartE0::peek(s, rom.data(), 0x1FE2, 0) == 7);
  CHECK(CartE0::peek(s, rom.data(), 0x13FF, 0) == 2);
  CartE0::poke(s, rom.data(), 0xFFEB, 0, 0);  // window 1 by a write at a mirror
  CHECK(CartE0::peek(s, rom.data(), 0x1400, 0) == 3);
  CHECK(CartE0::peek(s, rom.data(), 0x1FF7, 0) == 7);  // window 2 := slice 7
  CHECK(CartE0::peek(s, rom.data(), 0x1BFF, 0) == 7);
  CHECK(CartE0::peek(s, rom.data(), 0x1FF0, 0) == 7);  // window 2 := slice 0
  CHECK(CartE0::peek(s, rom.data(), 0x1800, 0) == 0);
  // $xFF8 and up are no E0 hotspots; window 3 never moves.
  CartE0::poke(s, rom.data(), 0x1FF8, 0, 0);
  CHECK(CartE0::peek(s, rom.data(), 0x1000, 0) == 2);
  CHECK(CartE0::peek(s, rom.data(), 0x1400, 0) == 3);
  CHECK(CartE0::peek(s, rom.data(), 0x1800, 0) == 0);
  CHECK(CartE0::peek(s, rom.data(), 0x1C00, 0) == 7);
  CartE0::reset(s, rng, 0);
  CHECK(CartE0::peek(s, rom.data(), 0x1000, 0) == 4);
  CHECK(CartE0::peek(s, rom.data(), 0x1400, 0) == 5);
  CHECK(CartE0::peek(s, rom.data(), 0x1800, 0) == 6);
  CHECK(rng.draws == 0);
}

static void test_fe() {
  std::vector<uint8_t> rom(8192);
  for (uint32_t i = 0; i < rom.size(); ++i) rom[i] = (uint8_t)((i < 4096 ? 0xA0 : 0xB0) | (i & 0x0F));
  CartState s;
  CountingRng rng;
  CartFE::power_on(s, rng);
  CartFE::reset(s, rng, 0);
  CHECK(CartFE::peek(s, rom.data(), 0xFFFC, 0) == 0xAC);  // A13 = 1: first 4K
  CHECK(CartFE::peek(s, rom.data(), 0xDFFC, 0) == 0xBC);  // A13 = 0: second 4K
  CHECK(CartFE::peek(s, rom.data(), 0x1003, 0) == 0xB3);
  CHECK(CartFE::peek(s, rom.data(), 0x3003, 0) == 0xA3);
  CartFE::poke(s, rom.data(), 0x1FFE, 0x12, 0);  // no bank state to change
  CHECK(CartFE::peek(s, rom.data(), 0xF001, 0) == 0xA1);
  CHECK(CartFE::peek(s, rom.data(), 0xD001, 0) == 0xB1);
}

// The doc's LFSR rule, written out bit by bit.
static uint8_t lfsr_step(uint8_t r) {
  const int b7 = (r >> 7) & 1, b5 = (r >> 5) & 1, b4 = (r >> 4) & 1, b3 = (r >> 3) & 1;
  const int in = !(b7 ^ b5 ^ b4 ^ b3);
  return (uint8_t)(((r << 1) | in) & 0xFF);
}

static std::vector<uint8_t> dpc_image() {
  std::vector<uint8_t> rom(CartDPC::kRomBytes + 255);
  for (uint32_t i = 0; i < 8192; ++i) rom[i] = (uint8_t)(0x10 * (i / 4096) + (i & 0x0F));
  for (uint32_t i = 0; i < 2048; ++i) rom[8192 + i] = (uint8_t)((i * 37) ^ (i >> 3));
  for (uint32_t i = 0; i < 255; ++i) rom[10240 + i] = 0xEE;
  return rom;
}

static void test_dpc_random() {
  std::vector<uint8_t> rom = dpc_image();
  const uint8_t* r = rom.data();
  CartState s;
  CountingRng rng;
  CartDPC::power_on(s, rng);
  CHECK(s.random == 1);
  CHECK(CartDPC::peek(s, r, 0x1FBC, 0) == 0x1C);  // bank 1 after install (direct page: no clock)
  CHECK(s.random == 1);
  // Random reads ($1000-$1003) return the already clocked value.
  uint8_t expect = lfsr_step(1);
  bool sequence_ok = true;
  for (int k = 0; k < 600; ++k) {
    sequence_ok &= CartDPC::peek(s, r, (uint16_t)(0x1000 + (k & 3)), 0) == expect;
    expect = lfsr_step(expect);
  }
  CHECK(sequence_ok);
  // Direct-read pages $1080-$1FBF do not reach the device: no clock.
  const uint8_t before = s.random;
  CHECK(CartDPC::peek(s, r, 0x1080, 0) == 0x10);
  CHECK(CartDPC::peek(s, r, 0x1FBF, 0) == 0x1F);
  CHECK(s.random == before);
  // Device pages clock once per access, reads and writes alike.
  CartDPC::peek(s, r, 0x1FFC, 0);  // a vector read
  CHECK(s.random == lfsr_step(before));
  CartDPC::peek(s, r, 0x1040, 0);  // ROM read in the fetcher page
  CHECK(s.random == lfsr_step(lfsr_step(before)));
  CartDPC::poke(s, r, 0x1000, 0x55, 0);
  CHECK(s.random == lfsr_step(lfsr_step(lfsr_step(before))));
  // Writes to $1080-$1FBF reach CartDPC::poke in Stella (null direct write
  // pointer), so they clock too (CartDPC::bank(), System::poke).
  CartDPC::poke(s, r, 0x1500, 0x55, 0);
  CHECK(s.random == lfsr_step(lfsr_step(lfsr_step(lfsr_step(before)))));
  // $1070-$1077 reset the LFSR to 1 (after this write's own clock).
  CartDPC::poke(s, r, 0x1073, 0x00, 0);
  CHECK(s.random == 1);
  CHECK(CartDPC::peek(s, r, 0x1002, 0) == lfsr_step(1));
}

static void test_dpc_fetchers() {
  std::vector<uint8_t> rom = dpc_image();
  const uint8_t* r = rom.data();
  const uint8_t* display = r + 8192;
  CartState s;
  CountingRng rng;
  CartDPC::power_on(s, rng);
  CartDPC::reset(s, rng, 0);

  // Fetcher 2: top 5, bottom 2, counter $306.
  CartDPC::poke(s, r, 0x1042, 5, 0);
  CartDPC::poke(s, r, 0x104A, 2, 0);
  CartDPC::poke(s, r, 0x1052, 0x06, 0);
  CartDPC::poke(s, r, 0x105A, 0xFB, 0);  // high = value & 7 = 3
  CHECK(s.counter[2] == 0x306 && s.top[2] == 5 && s.bottom[2] == 2 && s.flag[2] == 0);
  // Display reads: display[2047 - counter], then the counter decrements.
  CHECK(CartDPC::peek(s, r, 0x100A, 0) == display[2047 - 0x306]);
  CHECK(s.counter[2] == 0x305 && s.flag[2] == 0x00);
  // Low byte = top: the flag is set before the read, so the masked read sees it.
  CHECK(CartDPC::peek(s, r, 0x1012, 0) == (display[2047 - 0x305] & 0xFF));
  CHECK(s.flag[2] == 0xFF && s.counter[2] == 0x304);
  CHECK(CartDPC::peek(s, r, 0x103A, 0) == 0xFF);  // flag read, counter $304 -> $303
  CHECK(CartDPC::peek(s, r, 0x101A, 0) == 0);     // function 3 reads 0, $303 -> $302
  // Low byte = bottom clears the flag; the masked read returns 0.
  CHECK(CartDPC::peek(s, r, 0x1012, 0) == 0);
  CHECK(s.flag[2] == 0x00 && s.counter[2] == 0x301);
  // Writing top clears the flag.
  s.flag[2] = 0xFF;
  CartDPC::poke(s, r, 0x1042, 9, 0);
  CHECK(s.flag[2] == 0 && s.top[2] == 9);

  // 11-bit wrap, and random reads step counters 0-3 too.
  CartDPC::poke(s, r, 0x1050, 0x00, 0);
  CartDPC::poke(s, r, 0x1058, 0x00, 0);
  CHECK(s.counter[0] == 0);
  CartDPC::peek(s, r, 0x1000, 0);
  CHECK(s.counter[0] == 0x7FF);
  CHECK(CartDPC::peek(s, r, 0x1008, 0) == display[0]);
  CHECK(s.counter[0] == 0x7FE);

  // Music mode for fetcher 5 (counter high write with bit 4): its counter no
  // longer steps on reads, and a counter-low write loads top instead.
  CartDPC::poke(s, r, 0x1045, 9, 0);     // top 9
  CartDPC::poke(s, r, 0x104D, 4, 0);     // bottom 4
  CartDPC::poke(s, r, 0x105D, 0x12, 0);  // high 2, music on
  CHECK(s.music[0] == 1 && s.music[1] == 0 && s.music[2] == 0);
  CartDPC::poke(s, r, 0x1055, 0x33, 0);
  CHECK(s.counter[5] == 0x209);
  CartDPC::peek(s, r, 0x100D, 0);
  CHECK(s.counter[5] == 0x209);
  // Fetcher 6 not in music mode still steps; fetcher 4's music read steps 4.
  CartDPC::poke(s, r, 0x1056, 0x10, 0);
  CartDPC::peek(s, r, 0x100E, 0);
  CHECK(s.counter[6] == 0x00F);
  CartDPC::poke(s, r, 0x1054, 0x20, 0);
  CartDPC::peek(s, r, 0x1004, 0);
  CHECK(s.counter[4] == 0x01F);

  // Music update: 19912 cycles -> 15750 * 19912 / 1193191.66666667 = 262.84,
  // + fraction 0.25 = 263.09: 263 whole clocks; low 9 - (263 mod 10) = 6 is
  // above bottom 4 and not above top 9: flag $FF. Music counters never step.
  CartState m = s;
  m.music_cycles = 100;
  m.set_music_fraction(0.25);
  const uint32_t now = 100 + 19912;
  const double clocks = (15750.0 * 19912) / 1193191.66666667 + 0.25;
  const int whole = (int)clocks;
  const uint8_t amplitude = CartDPC::peek(m, r, 0x1005, now);
  CHECK(m.music_cycles == now);
  CHECK(m.music_fraction() == clocks - whole);
  const int low = 9 - whole % 10;
  CHECK(low == 6);
  CHECK(m.counter[5] == (0x200 | low));
  CHECK(m.flag[5] == 0xFF);
  CHECK(amplitude == 4);  // only fetcher 5 in music mode with its flag set
  // Another 5 clocks' worth (+ the kept 0.09): 6 - 5 = 1 <= bottom: flag $00, amplitude 0.
  const double five = 5 * 1193191.66666667 / 15750.0 + 1;
  CHECK(CartDPC::peek(m, r, 0x1006, now + (uint32_t)five) == 0);
  CHECK(m.counter[5] == 0x201 && m.flag[5] == 0x00);
  // Music fetchers 6 and 7 add 5 and 6 to the amplitude.
  m.music[1] = m.music[2] = 1;
  m.flag[5] = m.flag[6] = m.flag[7] = 0xFF;
  m.top[6] = m.top[7] = 0;  // top 0 forces low to 0, and 0 <= bottom 0 clears the flag
  m.set_music_fraction(0);
  m.music_cycles = 0;
  CHECK(CartDPC::peek(m, r, 0x1007, 0) == 15);  // no whole clock: nothing updated
  // 1000 cycles = 13.2 clocks: fetcher 5 wraps, 1 - 3 + 10 = 8 (flag $FF).
  CHECK(CartDPC::peek(m, r, 0x1007, 1000) == 4);
  CHECK(m.counter[5] == 0x208 && m.flag[5] == 0xFF);
  CHECK(m.flag[6] == 0 && m.flag[7] == 0 && (m.counter[6] & 0xFF) == 0);

  // Rebase: the saved clock follows the per-frame reset of the system clock.
  m.music_cycles = 30000;
  CartDPC::rebase_cycles(m, 29000);
  CHECK(m.music_cycles == 1000);
  CartDPC::rebase_cycles(m, 1500);
  CHECK(m.music_cycles == (uint32_t)-500);
}

static void test_dpc_banks_and_reset() {
  std::vector<uint8_t> rom = dpc_image();
  const uint8_t* r = rom.data();
  CartState s;
  CountingRng rng;
  CartDPC::power_on(s, rng);
  CHECK(CartDPC::peek(s, r, 0x1FF8, 0) == 0x08);  // switched to bank 0 before the read
  CHECK(CartDPC::peek(s, r, 0x1234, 0) == 0x04);  // direct page follows the bank
  CartDPC::poke(s, r, 0xFFF9, 0, 0);
  CHECK(CartDPC::peek(s, r, 0x1234, 0) == 0x14);
  CartDPC::poke(s, r, 0x3FF8, 0, 0);
  CHECK(CartDPC::peek(s, r, 0x1234, 0) == 0x04);

  // Reset: bank 1, music clock re-based, fetcher registers and LFSR kept.
  CartDPC::poke(s, r, 0x1041, 0x44, 0);
  CartDPC::poke(s, r, 0x1049, 0x22, 0);
  CartDPC::poke(s, r, 0x1051, 0x66, 0);
  CartDPC::poke(s, r, 0x105F, 0x15, 0);
  s.flag[1] = 0xFF;
  s.set_music_fraction(0.5);
  CartState before = s;
  CartDPC::reset(s, rng, 1234);
  CHECK(rng.draws == 0);
  CHECK(s.bank == 1 && s.music_cycles == 1234 && s.music_fraction() == 0.0);
  bool kept = s.random == before.random;
  for (int i = 0; i < 8; ++i) {
    kept &= s.top[i] == before.top[i] && s.bottom[i] == before.bottom[i];
    kept &= s.counter[i] == before.counter[i] && s.flag[i] == before.flag[i];
  }
  for (int i = 0; i < 3; ++i) kept &= s.music[i] == before.music[i];
  CHECK(kept);
  CHECK(s.top[1] == 0x44 && s.counter[1] == 0x66 && s.music[2] == 1);
  CHECK(CartDPC::peek(s, r, 0x1234, 0) == 0x14);
}

// The bus reads offsets a mapper calls direct from direct_base() of their
// page without calling peek: in every bank state the walk reaches, each direct offset must
// read what peek returns there and leave the state as peek would.
template <class Cart>
static void check_direct_reads(const std::vector<uint8_t>& rom) {
  CartState s;
  CountingRng rng;
  Cart::power_on(s, rng);
  Cart::reset(s, rng, 0);
  uint32_t direct = 0;
  for (uint32_t hotspot = 0x0FE0; hotspot < 0x1000; ++hotspot) {
    Cart::peek(s, rom.data(), (uint16_t)(0x1000 | hotspot), 0);  // visits every bank a hotspot can select
    for (uint32_t offset = 0; offset <= Cart::kOffsetMask; ++offset) {
      if (!cart::is_direct<Cart>((uint16_t)offset)) continue;
      ++direct;
      const uint8_t seen =
          Cart::direct_base(s, rom.data(), offset >> Cart::kPageShift)[offset & ((1u << Cart::kPageShift) - 1)];
      CartState after = s;
      const uint8_t peeked = Cart::peek(after, rom.data(), (uint16_t)(0xF000 | offset), 0);
      CHECK(seen == peeked);
      CHECK(std::memcmp(&after, &s, sizeof s) == 0);
    }
  }
  // Every mapper but FE takes most of its ROM directly (E0 in 1K pages).
  CHECK((direct > 0) == (Cart::kDirectHi > Cart::kDirectLo));
}

static void test_direct_reads() {
  std::vector<uint8_t> rom(16384 + 2048);
  for (uint32_t i = 0; i < rom.size(); ++i) rom[i] = (uint8_t)(i * 13 + (i >> 8) * 7 + 1);
#define CULE_MAPPER(name, Type) check_direct_reads<Type>(rom);
#include "cart/mappers.inc"
#undef CULE_MAPPER
}

int main() {
  test_direct_reads();
  test_2k_4k();
  test_f8_f6();
  check_superchip<CartF8SC>(1, 2);
  check_superchip<CartF6SC>(0, 4);
  test_e0();
  test_fe();
  test_dpc_random();
  test_dpc_fetchers();
  test_dpc_banks_and_reset();
  static_assert(sizeof(CartState) == 188, "CartState layout changed");
  static_assert(Cart2K::kRomBytes == 2048 && Cart4K::kRomBytes == 4096 && CartF8::kRomBytes == 8192 &&
                    CartF6::kRomBytes == 16384 && CartF8SC::kRomBytes == 8192 && CartF6SC::kRomBytes == 16384 &&
                    CartE0::kRomBytes == 8192 && CartFE::kRomBytes == 8192 && CartDPC::kRomBytes == 10240,
                "image sizes");
  if (g_failures) {
    std::fprintf(stderr, "carts: %d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("carts: all checks passed\n");
  return 0;
}
