// The TIA as ALE 0.12.1's Stella-2.x TIA (emucore/TIA.cxx) behaves: a lazy
// renderer that catches the picture up to the current colour clock on every
// TIA access, then applies the access. Upstream: the TIA of Stella 2.x that
// ALE 0.12.1 vendors (src/ale/emucore/TIA.cxx); the functions and tables
// named below are its own.
//
// One register decoder (`poke`) serves both phases of a frame: the state
// update, which may skip pixel output (`frame == nullptr`) but keeps every
// other effect (collisions, masks, positions), and rendering.
#pragma once

#include "common.hpp"
#if !CULE_DEVICE_CODE
#include <array>
#include <utility>
#endif

namespace cule {

constexpr int kClocksPerLine = 228;  // colour clocks per scanline: HBLANK 68 + 160 pixels (TIA.cxx)
constexpr int kHBlankClocks = 68;    // horizontal blank; 160 visible pixels follow
constexpr int kScreenWidth = 160;
constexpr int32_t kNoVsyncFinish = 0x7FFFFFFF;

// Per-ROM display settings, fixed once the console has detected NTSC/PAL.
#define CULE_TIA_CONFIG_FIELDS(X)                                               \
  X(uint16_t, ystart)        /* Display.YStart: first scanline of the window */ \
  X(uint16_t, height)        /* Display.Height (250 when PAL) */                \
  X(uint16_t, max_scanlines) /* 290 NTSC, 342 PAL (the cap in TIA::poke) */     \
  X(uint8_t, color_loss)     /* PAL colour loss (TIA::startFrame) */            \
  X(uint8_t, hmove_blanks)   /* Emulation.HmoveBlanks */

struct TiaConfig {
  CULE_TIA_CONFIG_FIELDS(CULE_DECLARE_FIELD)
};

// An object's current mask: the position and shape it was built with. The
// TIA rebuilds masks only at certain events, so these may lag POSx/NUSIZx.
#define CULE_OBJECT_MASK_FIELDS(X)                                                  \
  X(int16_t, pos)                                                                   \
  X(uint8_t, mode) /* players/missiles: NUSIZ & 7 */                                \
  X(uint8_t, size) /* missiles/ball: width index (width = 1 << size); players: 0 */ \
  X(uint8_t, kind) /* MaskKind */

struct ObjectMask {
  CULE_OBJECT_MASK_FIELDS(CULE_DECLARE_FIELD)
  uint8_t pad_[3];
};

enum MaskKind : uint8_t { kMaskNormal = 0, kMaskSkipFirstCopy = 1, kMaskDisabled = 2 };

// Enabled-object bits (TIA::updateFrameScanline); score and priority share the byte with them.
enum : uint8_t {
  kP0Bit = 0x01, kM0Bit = 0x02, kP1Bit = 0x04, kM1Bit = 0x08,
  kBLBit = 0x10, kPFBit = 0x20, kScoreBit = 0x40, kPriorityBit = 0x80
};

// The playfield's 160 pixels as 3 64-bit words (low half first), in 4-byte
// words only, so consoles can sit at odd word strides (kernels.cu).
using PlayfieldBits = uint32_t[6];

#define CULE_TIA_FIELDS(X)                                                                                  \
  X(TiaConfig, config)                                                                                      \
  /* Colour clocks relative to the system clock, rebased every frame (TIA::systemCyclesReset). */           \
  X(int32_t, frame_start_clock)                                                                             \
  X(int32_t, start_display_clock)                                                                           \
  X(int32_t, stop_display_clock)                                                                            \
  X(int32_t, last_update_clock)                                                                             \
  X(int32_t, clocks_to_end_of_line)                                                                         \
  X(int32_t, vsync_finish_clock)                                                                            \
  X(int32_t, last_hmove_clock)                                                                              \
  X(int32_t, dump_disabled_cycle) /* CPU cycles */                                                          \
  X(int32_t, scanline_count_last_frame)                                                                     \
  X(int32_t, current_scanline)                                                                              \
  X(uint32_t, pf)          /* 20 bits: PF0 D7-D4, PF1 D0-D7, PF2 D0-D7 (computePlayfieldMaskTable) */       \
  X(uint32_t, pf_bits_key) /* pf | reflected << 20 that pf_bits was built from; ~0 = stale */               \
  X(PlayfieldBits, pf_bits) /* the playfield's pixels for that key */                                       \
  X(uint32_t, frame_pixel) /* the frame pointer, as an index into the buffer */                             \
  X(uint16_t, collision)                                                                                    \
  X(int16_t, pos_p0) X(int16_t, pos_p1) X(int16_t, pos_m0) X(int16_t, pos_m1) X(int16_t, pos_bl)            \
  X(ObjectMask, mask_p0) X(ObjectMask, mask_p1) X(ObjectMask, mask_m0) X(ObjectMask, mask_m1)               \
  X(ObjectMask, mask_bl)                                                                                    \
  X(uint8_t, pf_reflected) /* playfield table in use */                                                     \
  X(uint8_t, vsync) X(uint8_t, vblank) X(uint8_t, nusiz0) X(uint8_t, nusiz1) X(uint8_t, ctrlpf)             \
  X(uint8_t, priority_score)                                                                                \
  X(uint8_t, colup0) X(uint8_t, colup1) X(uint8_t, colupf) X(uint8_t, colubk)                               \
  X(uint8_t, refp0) X(uint8_t, refp1) X(uint8_t, grp0) X(uint8_t, grp1) X(uint8_t, dgrp0) X(uint8_t, dgrp1) \
  X(uint8_t, current_grp0) X(uint8_t, current_grp1)                                                         \
  X(uint8_t, enam0) X(uint8_t, enam1) X(uint8_t, enabl) X(uint8_t, denabl)                                  \
  /* HMxx: raw high nibbles 0-15 */                                                                         \
  X(uint8_t, hmp0) X(uint8_t, hmp1) X(uint8_t, hmm0) X(uint8_t, hmm1) X(uint8_t, hmbl)                      \
  X(uint8_t, vdelp0) X(uint8_t, vdelp1) X(uint8_t, vdelbl) X(uint8_t, resmp0) X(uint8_t, resmp1)            \
  X(uint8_t, enabled_objects)                                                                               \
  X(uint8_t, hmove_blank_pending)                                                                           \
  X(uint8_t, cosmic_ark) X(uint8_t, cosmic_ark_counter)                                                     \
  X(uint8_t, dump_enabled)                                                                                  \
  X(uint8_t, partial_frame)  /* the frame in progress has not ended yet */                                  \
  X(uint8_t, frame_greyed)                                                                                  \
  X(uint8_t, current_buffer) /* which of the two frame buffers is current */

struct Tia {
  CULE_TIA_FIELDS(CULE_DECLARE_FIELD)
};
static_assert(sizeof(TiaConfig) == 8 && sizeof(ObjectMask) == 8 && sizeof(Tia) == 180,
              "saved states, render logs and device arrays depend on the TIA's layout");

// What the TIA's input pins read during a frame (7).
struct TiaInputs {
  int32_t resistance[4];  // INPT0-3: 0 = charged at once, 0x7FFFFFFF = never
  uint8_t fire[2];        // INPT4/5 pin Six: 1 = not pressed
};

constexpr int32_t kMinResistance = 0;
constexpr int32_t kMaxResistance = 0x7FFFFFFF;

namespace tia {

// Result of a register write for the CPU side.
// What a write ends: the frame (VSYNC, the scanline cap) or the CPU's
// scanline (WSYNC). The CPU stops after the writing instruction.
enum : uint8_t { kEndsFrame = 1, kEndsLine = 2 };

// What a register write means for the CPU, packed into one 64-bit word so
// that an out-of-line caller (the console's io_poke on the host, poke itself
// on the device) gets it back in one register: as a 12-byte struct it came
// back through the stack, and the caller's loads of the halves just stored
// separately missed store-to-load forwarding (perf: half of io_poke's time on
// solaris).
class PokeResult {
  uint64_t bits_;  // due | stall_cycles << 32 (< 76) | ends << 56

 public:
  CULE_HD PokeResult(uint32_t stall_cycles, int32_t due, uint8_t ends)
      : bits_((uint64_t)(uint32_t)due | (uint64_t)stall_cycles << 32 | (uint64_t)ends << 56) {}
  CULE_HD uint32_t stall_cycles() const { return (uint32_t)(bits_ >> 32) & 0x00FFFFFFu; }  // WSYNC
  CULE_HD int32_t due() const { return (int32_t)(uint32_t)bits_; }  // the picture's catch-up target (see poke)
  CULE_HD uint8_t ends() const { return (uint8_t)(bits_ >> 56); }   // kEnds* bits
};

CULE_HD constexpr uint8_t reflect_byte_bits(uint8_t v) {
  v = (uint8_t)(((v & 0xF0) >> 4) | ((v & 0x0F) << 4));
  v = (uint8_t)(((v & 0xCC) >> 2) | ((v & 0x33) << 2));
  return (uint8_t)(((v & 0xAA) >> 1) | ((v & 0x55) << 1));
}
#if !CULE_DEVICE_CODE
// Every byte reversed: one load where the swaps took nine operations, and
// draw_pixels reverses both players' graphics for every piece of a line.
struct ReflectedBytes {
  uint8_t of[256];
  constexpr ReflectedBytes() : of() {
    for (int v = 0; v < 256; ++v) of[v] = reflect_byte_bits((uint8_t)v);
  }
};
inline constexpr ReflectedBytes kReflectedBytes{};
#endif
CULE_HD uint8_t reflect_byte(uint8_t v) {
#if CULE_DEVICE_CODE
  return reflect_byte_bits(v);
#else
  return kReflectedBytes.of[v];
#endif
}

CULE_HD int wrap160(int v) {
  v %= 160;
  return v < 0 ? v + 160 : v;
}

// Copy offsets of the 8 NUSIZ modes (computePlayerMaskTable); modes 5 and 7 are one wide copy.
CULE_HD bool in_copy(int mode, int d, int width) {
  if (d < width) return true;
  switch (mode) {
    case 1: return d >= 16 && d < 16 + width;
    case 2: return d >= 32 && d < 32 + width;
    case 3: return (d >= 16 && d < 16 + width) || (d >= 32 && d < 32 + width);
    case 4: return d >= 64 && d < 64 + width;
    case 6: return (d >= 32 && d < 32 + width) || (d >= 64 && d < 64 + width);
    default: return false;
  }
}

// A scanline's 160 pixels as a bitset: objects are placed on it whole, so a
// piece of line costs a few word operations instead of work per pixel.
struct LineBits {
  uint64_t w[3];
};

CULE_HD int lowest_bit(uint64_t v) {
#if CULE_DEVICE_CODE
  return __ffsll((long long)v) - 1;
#else
  return __builtin_ctzll(v);
#endif
}

CULE_HD void set_bits(LineBits& b, uint64_t pattern, int start) {
  // pattern bit i lands on pixel start+i; start < 160 and the pattern spans
  // at most 40 pixels, so it touches at most two words and wraps at most once.
  const int room = 160 - start;  // pixels before the right edge
  if (room < 64) {
    b.w[0] |= pattern >> room;  // what is past the edge wraps to the left
    pattern &= (1ull << room) - 1;
  }
  const int word = start >> 6, shift = start & 63;
  b.w[word] |= pattern << shift;
  if (shift && word < 2) b.w[word + 1] |= pattern >> (64 - shift);
}

#if !CULE_DEVICE_CODE
// For each p in [0, 160], the pixels left of p: a span is the difference of
// two, six loads where the words' bounds took three compares each.
struct PixelPrefixes {
  LineBits of[kScreenWidth + 1];
  constexpr PixelPrefixes() : of() {
    for (int p = 0; p <= kScreenWidth; ++p)
      for (int i = 0; i < 3; ++i) {
        const int n = p - 64 * i;  // pixels of word i left of p
        of[p].w[i] = n <= 0 ? 0 : n >= 64 ? ~0ull : (1ull << n) - 1;
      }
  }
};
inline constexpr PixelPrefixes kPixelPrefixes{};
#endif

// Pixels x to x + count - 1 (0 <= x <= x + count <= 160).
CULE_HD LineBits span_bits(int x, int count) {
#if !CULE_DEVICE_CODE
  // Clamped, so that even a piece outside the line reads inside the table.
  const auto at = [](int p) -> const LineBits& {
    return kPixelPrefixes.of[p < 0 ? 0 : p > kScreenWidth ? kScreenWidth : p];
  };
  const LineBits &from = at(x), &to = at(x + count);
  return LineBits{{to.w[0] & ~from.w[0], to.w[1] & ~from.w[1], to.w[2] & ~from.w[2]}};
#else
  LineBits b{{0, 0, 0}};
  for (int i = 0; i < 3; ++i) {
    const int lo = i * 64, hi = lo + 64;
    const int a = x > lo ? x : lo, e = (x + count) < hi ? (x + count) : hi;
    if (a < e) b.w[i] = (e - a == 64 ? ~0ull : ((1ull << (e - a)) - 1)) << (a - lo);
  }
  return b;
#endif
}

// The 15 collision latches in their bit order, two per register from CXM0P
// (D7, then D6) to CXPPMM: the objects of each pair, named as kP0Bit's kin.
#define CULE_COLLISION_PAIRS(X)                                                   \
  X(M0, P1) X(M0, P0) X(M1, P0) X(M1, P1) X(P0, PF) X(P0, BL) X(P1, PF) X(P1, BL) \
  X(M0, PF) X(M0, BL) X(M1, PF) X(M1, BL) X(BL, PF) X(P0, P1) X(M0, M1)

#if !CULE_DEVICE_CODE
// The latches that each set of enabled objects (enabled_objects' low six
// bits) could set.
struct PairsOf {
  uint16_t of[64];
  constexpr PairsOf() : of() {
    for (int objects = 0; objects < 64; ++objects) {
      int bit = 0;
#define CULE_PAIR_OF(a, b) \
  if ((objects & k##a##Bit) && (objects & k##b##Bit)) of[objects] = (uint16_t)(of[objects] | (1u << bit)); \
  ++bit;
      CULE_COLLISION_PAIRS(CULE_PAIR_OF)
#undef CULE_PAIR_OF
    }
  }
};
inline constexpr PairsOf kPairsOf{};
#endif

// Whether drawing could latch a collision not latched yet. On the host, only
// pairs of enabled objects whose latch is still clear count: once a frame's
// possible collisions have all latched (a player on the playfield, say), the
// pieces of the frames nobody looks at cost nothing. The device tests every
// piece with two objects or more.
CULE_HD bool may_latch(uint8_t objects, uint16_t latched) {
#if !CULE_DEVICE_CODE
  return (kPairsOf.of[objects & 0x3F] & ~latched) != 0;
#else
  (void)latched;
  return (objects & (objects - 1) & 0x3F) != 0;
#endif
}

// The collision latches that one word of pixels sets, each object's word
// already cut to the piece. Straight-line, so the six words stay in registers.
CULE_HD uint16_t pair_hits(uint64_t PF, uint64_t BL, uint64_t P0, uint64_t P1, uint64_t M0, uint64_t M1) {
  uint32_t hits = 0, bit = 0;
#define CULE_PAIR_HIT(a, b) hits |= (uint32_t)((a & b) != 0) << bit++;
  CULE_COLLISION_PAIRS(CULE_PAIR_HIT)
#undef CULE_PAIR_HIT
  return (uint16_t)hits;
}

// The pixels where two or more of six objects' words are set.
CULE_HD uint64_t shared_pixels(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f) {
  uint64_t ones = a, twos = 0;
  twos |= ones & b, ones |= b;
  twos |= ones & c, ones |= c;
  twos |= ones & d, ones |= d;
  twos |= ones & e, ones |= e;
  return twos | (ones & f);
}

// The copies of an 8-pixel pattern that the NUSIZ modes (computePlayerMaskTable) place at +0,
// +16, +32 and +64 pixels; modes 5 and 7 are one wide copy. The first three
// fit one 40-pixel pattern, placed at once.
CULE_HD void place_copies(LineBits& b, uint64_t pattern, int pos, int mode, bool skip_first) {
  const uint8_t table[8] = {0x1, 0x3, 0x5, 0x7, 0x9, 0x1, 0xD, 0x1};  // bits 0-3: +0, +16, +32, +64
  const uint8_t copies = table[mode & 7] & (skip_first ? 0xE : 0xF);
  const uint64_t near = ((copies & 1) ? pattern : 0) | ((copies & 2) ? pattern << 16 : 0) |
                        ((copies & 4) ? pattern << 32 : 0);
  if (near) set_bits(b, near, pos);
  if (copies & 8) set_bits(b, pattern, pos + 64 >= 160 ? pos + 64 - 160 : pos + 64);  // pos < 160: one wrap
}

// Pixels a player lights: pixel pos+o+i shows GRP bit 7-i; double and quad
// width repeat each bit and start one pixel later.
CULE_HD LineBits player_bits(const ObjectMask& m, uint8_t grp) {
  LineBits b{{0, 0, 0}};
  if (!grp) return b;
  const uint8_t order = reflect_byte(grp);  // bit i = pixel i of the copy
  if (m.mode == 5 || m.mode == 7) {
    if (m.kind == kMaskSkipFirstCopy) return b;
    const int rep = m.mode == 5 ? 2 : 4;
    uint64_t wide = 0;
    for (int i = 0; i < 8; ++i)
      if (order & (1 << i)) wide |= ((1ull << rep) - 1) << (i * rep);
    set_bits(b, wide, (m.pos + 1) % 160);
    return b;
  }
#if !CULE_DEVICE_CODE  // the device's render kernel keeps one path for every mode
  if (m.mode == 0 && m.kind != kMaskSkipFirstCopy) {  // one copy: most pieces
    set_bits(b, order, m.pos);
    return b;
  }
#endif
  place_copies(b, order, m.pos, m.mode, m.kind == kMaskSkipFirstCopy);
  return b;
}

CULE_HD LineBits missile_bits(const ObjectMask& m) {
  LineBits b{{0, 0, 0}};
  if (m.kind == kMaskDisabled) return b;
  place_copies(b, (1ull << (1 << m.size)) - 1, m.pos, m.mode == 5 || m.mode == 7 ? 0 : m.mode, false);
  return b;
}

CULE_HD LineBits ball_bits(const ObjectMask& m) {
  LineBits b{{0, 0, 0}};
  set_bits(b, (1ull << (1 << m.size)) - 1, m.pos);
  return b;
}

CULE_HD uint32_t reverse_bits32(uint32_t v) {
#if CULE_DEVICE_CODE
  return __brev(v);
#else
  v = (v >> 16) | (v << 16);
  v = ((v & 0xFF00FF00u) >> 8) | ((v & 0x00FF00FFu) << 8);
  v = ((v & 0xF0F0F0F0u) >> 4) | ((v & 0x0F0F0F0Fu) << 4);
  v = ((v & 0xCCCCCCCCu) >> 2) | ((v & 0x33333333u) << 2);
  return ((v & 0xAAAAAAAAu) >> 1) | ((v & 0x55555555u) << 1);
#endif
}

// 16 bits -> 64: bit i fills bits 4i to 4i+3 (a playfield bit is 4 pixels wide).
CULE_HD uint64_t widen4(uint32_t bits) {
  uint64_t v = bits & 0xFFFFu;
  v = (v | v << 24) & 0x000000FF000000FFull;
  v = (v | v << 12) & 0x000F000F000F000Full;
  v = (v | v << 6) & 0x0303030303030303ull;
  v = (v | v << 3) & 0x1111111111111111ull;
  return v * 0xF;
}

// The playfield's 160 pixels (computePlayfieldMaskTable). Shown from the left: PF0 D4-D7, PF1
// D7-D0, PF2 D0-D7 (pf holds PF1 D0 at bit 4, so its byte is reversed); the
// right half repeats that order, or mirrors it when reflected.
CULE_HD LineBits playfield_bits(uint32_t pf, bool reflected) {
  LineBits b{{0, 0, 0}};
  if (!pf) return b;
  const uint32_t left = (pf & 0xFF00Fu) | (reverse_bits32((pf >> 4) & 0xFFu) >> 20);
  const uint32_t right = reflected ? reverse_bits32(left) >> 12 : left;
  const uint64_t right_low = widen4(right);  // pixels 80-143
  b.w[0] = widen4(left);
  b.w[1] = widen4(left >> 16) | right_low << 16;
  b.w[2] = right_low >> 48 | widen4(right >> 16) << 16;
  return b;
}

// Composed in one 64-bit register and copied whole: built field by field on
// the stack, the mask was stored in pieces and reloaded as one word, which
// misses store-to-load forwarding (perf: HMOVE's five masks were a third of
// the TIA writes' time on solaris). Little-endian, as the host and the GPU are.
#if !CULE_DEVICE_CODE  // the same layout on both sides; NVRTC lacks offsetof
static_assert(offsetof(ObjectMask, pos) == 0 && offsetof(ObjectMask, mode) == 2 && offsetof(ObjectMask, size) == 3 &&
                  offsetof(ObjectMask, kind) == 4,
              "make_mask packs the fields at these offsets");
#endif
CULE_HD ObjectMask make_mask(int pos, uint8_t mode, uint8_t size, uint8_t kind) {
  const uint64_t bits =
      (uint64_t)(uint16_t)pos | (uint64_t)mode << 16 | (uint64_t)size << 24 | (uint64_t)kind << 32;
  ObjectMask m;
  copy_bytes(&m, &bits, sizeof m);
  return m;
}

CULE_HD void rebuild_player_masks(Tia& t) {
  t.mask_p0 = make_mask(t.pos_p0, t.nusiz0 & 7, 0, kMaskNormal);
  t.mask_p1 = make_mask(t.pos_p1, t.nusiz1 & 7, 0, kMaskNormal);
}
CULE_HD ObjectMask missile_mask_for(int pos, uint8_t nusiz) {
  return make_mask(pos, nusiz & 7, (nusiz >> 4) & 3, kMaskNormal);
}
CULE_HD ObjectMask ball_mask_for(int pos, uint8_t ctrlpf) { return make_mask(pos, 0, (ctrlpf >> 4) & 3, kMaskNormal); }

// memset with the value in a register: a byte loop storing through
// uint8_t* would reload a Tia field every pixel (the store may alias it).
CULE_HD void fill_bytes(uint8_t* p, uint8_t v, int n) {
#if CULE_DEVICE_CODE
  for (int i = 0; i < n; ++i) p[i] = v;
#else
  __builtin_memset(p, v, (size_t)n);
#endif
}

// Bit k of a byte -> byte k all ones (pixel k of an 8-pixel group).
CULE_HD uint64_t expand_byte(uint64_t b) {
  b = (b | b << 28) & 0x0000000F0000000Full;
  b = (b | b << 14) & 0x0003000300030003ull;
  b = (b | b << 7) & 0x0101010101010101ull;
  return b * 0xFF;
}

CULE_HD uint64_t load8(const uint8_t* p) {
  uint64_t v = 0;
#if CULE_DEVICE_CODE
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
#else
  __builtin_memcpy(&v, p, 8);
#endif
  return v;
}
CULE_HD void store8(uint8_t* p, uint64_t v) {
#if CULE_DEVICE_CODE
  for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
#else
  __builtin_memcpy(p, &v, 8);
#endif
}

// Colours the pixels of `pixels` inside `piece`, one unit of 8 * kPaintWords
// pixels at a time: a set pixel's byte takes the colour, the others keep
// theirs (little-endian: pixel k of a unit is byte k). Bits past pixel 159 are
// never set, and 160 is a whole number of units. The host paints 16 pixels a
// unit, halving the loop's turns, each a branch whose count changes from piece
// to piece; the device paints 8, as 16 cost its run kernel a spill.
constexpr int kPaintWords = CULE_DEVICE_CODE ? 1 : 2;
CULE_HD void paint(uint8_t* line, const LineBits& pixels, const LineBits& piece, uint8_t colour) {
  constexpr int kShift = kPaintWords == 1 ? 3 : 4;  // log2 of the unit's pixels
  constexpr uint64_t kUnit = (1ull << (8 * kPaintWords)) - 1;
  const uint64_t fill = 0x0101010101010101ull * colour;
  for (int i = 0; i < 3; ++i) {
    uint64_t v = pixels.w[i] & piece.w[i];
    while (v) {
      const int unit = lowest_bit(v) >> kShift;
      const uint64_t bits = (v >> (unit << kShift)) & kUnit;
      uint8_t* p = line + i * 64 + (unit << kShift);
      if (bits == kUnit) {
        for (int k = 0; k < kPaintWords; ++k) store8(p + 8 * k, fill);
      } else {
        for (int k = 0; k < kPaintWords; ++k) {
          const uint64_t mask = expand_byte((bits >> (8 * k)) & 0xFF);
          store8(p + 8 * k, (load8(p + 8 * k) & ~mask) | (fill & mask));
        }
      }
      v &= ~(kUnit << (unit << kShift));
    }
  }
}

CULE_HD LineBits bits_or(const LineBits& a, const LineBits& b) {
  return LineBits{{a.w[0] | b.w[0], a.w[1] | b.w[1], a.w[2] | b.w[2]}};
}
CULE_HD LineBits bits_and_not(const LineBits& a, const LineBits& b) {
  return LineBits{{a.w[0] & ~b.w[0], a.w[1] & ~b.w[1], a.w[2] & ~b.w[2]}};
}

// Draws `count` pixels from pixel x of the current line (TIA::updateFrameScanline): latches the
// collisions of every pixel and, when frame is not null, writes the colours
// Stella's priority encoder picks. The frame pointer's row holds pixel x at
// frame_pixel.
CULE_PHASE void draw_pixels(Tia& t, uint8_t* frame, int x, int count) {
  uint8_t* line = frame ? frame + t.frame_pixel - x : nullptr;  // pixel 0 of this row
  if (t.vblank & 0x02) {  // VBLANK: black, and no collisions
    if (line)
      fill_bytes(line + x, 0, count);
    return;
  }
  const uint8_t objects = t.enabled_objects;
  const bool may_collide = may_latch(objects, t.collision);
  if (!line && !may_collide) return;  // nothing to latch and nothing to draw
  const LineBits none{{0, 0, 0}};
  LineBits pf = none;
  if (objects & kPFBit) {
    const uint32_t key = t.pf | (uint32_t)t.pf_reflected << 20;
    if (key != t.pf_bits_key) {  // PF changes far less often than pieces are drawn
      // Used from registers: reloaded, the halves just stored as 4-byte words
      // would be read as 8-byte ones, which store-to-load forwarding cannot serve.
      pf = playfield_bits(t.pf, t.pf_reflected);
      for (int i = 0; i < 3; ++i) {
        t.pf_bits[2 * i] = (uint32_t)pf.w[i];
        t.pf_bits[2 * i + 1] = (uint32_t)(pf.w[i] >> 32);
      }
      t.pf_bits_key = key;
    } else {
      for (int i = 0; i < 3; ++i) pf.w[i] = (uint64_t)t.pf_bits[2 * i] | (uint64_t)t.pf_bits[2 * i + 1] << 32;
    }
  }
  const LineBits bl = (objects & kBLBit) ? ball_bits(t.mask_bl) : none;
  const LineBits p0 = player_bits(t.mask_p0, t.current_grp0);
  const LineBits p1 = player_bits(t.mask_p1, t.current_grp1);
  const LineBits m0 = (objects & kM0Bit) ? missile_bits(t.mask_m0) : none;
  const LineBits m1 = (objects & kM1Bit) ? missile_bits(t.mask_m1) : none;
  const LineBits piece = span_bits(x, count);
  // Most words of a piece have no pixel where objects meet; then no pair needs a test.
  if (may_collide)
    for (int i = 0; i < 3; ++i) {
      const uint64_t in = piece.w[i];
      if (shared_pixels(pf.w[i], bl.w[i], p0.w[i], p1.w[i], m0.w[i], m1.w[i]) & in)
        t.collision |= pair_hits(pf.w[i] & in, bl.w[i] & in, p0.w[i] & in, p1.w[i] & in, m0.w[i] & in, m1.w[i] & in);
    }
  if (!line) return;
  fill_bytes(line + x, t.colubk, count);
  if (!(objects & 0x3F)) return;  // background alone: a third to a half of the pieces
  const bool score = t.priority_score & kScoreBit;
  const LineBits left = span_bits(0, 80), right = span_bits(80, 80);
  if ((objects & 0x3F) == kPFBit) {
    // Stella's PF-only fast path uses score colours even with priority set,
    // where its general encoder would give COLUPF (TIA::updateFrameScanline's fast paths).
    if (score) {
      paint(line, pf, bits_and_not(piece, right), t.colup0);
      paint(line, pf, bits_and_not(piece, left), t.colup1);
    } else {
      paint(line, pf, piece, t.colupf);
    }
    return;
  }
  const LineBits p1m1 = bits_or(p1, m1), p0m0 = bits_or(p0, m0);
  if (t.priority_score & kPriorityBit) {
    paint(line, p1m1, piece, t.colup1);
    paint(line, p0m0, piece, t.colup0);
    paint(line, bits_or(pf, bl), piece, t.colupf);
    return;
  }
  paint(line, bl, piece, t.colupf);
  if (score) {
    paint(line, pf, bits_and_not(piece, right), t.colup0);
    paint(line, pf, bits_and_not(piece, left), t.colup1);
    // A score-coloured PF pixel on the left already shows COLUP0, which the
    // encoder keeps even under P1/M1.
    const LineBits pf_left = LineBits{{pf.w[0] & left.w[0], pf.w[1] & left.w[1], pf.w[2] & left.w[2]}};
    paint(line, bits_and_not(p1m1, pf_left), piece, t.colup1);
  } else {
    paint(line, pf, piece, t.colupf);
    paint(line, p1m1, piece, t.colup1);
  }
  paint(line, p0m0, piece, t.colup0);
}

// End-of-line bookkeeping, done only on window lines (the end of TIA::updateFrame's line loop).
CULE_HD void end_of_line(Tia& t) {
  t.pf_reflected = t.ctrlpf & 0x01;
  rebuild_player_masks(t);
  if (t.cosmic_ark) {
    const int drift[4] = {18, 33, 0, 17};
    t.cosmic_ark_counter = (t.cosmic_ark_counter + 1) & 3;
    t.pos_m0 = (int16_t)(t.pos_m0 - drift[t.cosmic_ark_counter]);
    if (t.pos_m0 >= 160) t.pos_m0 -= 160;
    else if (t.pos_m0 < 0) t.pos_m0 += 160;
    t.mask_m0 = missile_mask_for(t.pos_m0, t.nusiz0);
    if (t.cosmic_ark_counter == 1) t.mask_m0.size |= 1;  // at least 2 pixels wide
    else if (t.cosmic_ark_counter == 2) t.mask_m0.kind = kMaskDisabled;
  }
}

#if CULE_DEVICE_CODE
// updateFrame: make the picture final up to colour clock `clock` (TIA::updateFrame).
// The device keeps the branching form below: the host's selects (the #else)
// cost the DPC build's run kernel an 8-byte spill on sm_90 (ptxas, nvcc 13.0).
CULE_CATCH_UP void render_to(Tia& t, uint8_t* frame, int32_t clock) {
  if (clock < t.start_display_clock || t.last_update_clock >= t.stop_display_clock || t.last_update_clock >= clock)
    return;
  if (clock > t.stop_display_clock) clock = t.stop_display_clock;
  do {
    int h = kClocksPerLine - t.clocks_to_end_of_line;
    int count;
    // Strict '>': a target exactly at a line end leaves clocks_to_end_of_line
    // at 0, deferring the end-of-line work to the next call (TIA::updateFrame).
    if (clock > t.last_update_clock + t.clocks_to_end_of_line) {
      count = t.clocks_to_end_of_line;
      t.clocks_to_end_of_line = kClocksPerLine;
      t.last_update_clock += count;
    } else {
      count = clock - t.last_update_clock;
      t.clocks_to_end_of_line -= count;
      t.last_update_clock = clock;
    }
    if (h < kHBlankClocks) {
      const int skip = (kHBlankClocks - h) < count ? (kHBlankClocks - h) : count;
      h += skip;
      count -= skip;
    }
    const uint32_t piece_start = t.frame_pixel;
    // A reset during a partial frame leaves lastUpdate at the frame's line 0
    // (TIA::reset, TIA::frameReset), so Stella draws up to YStart lines more than the window into
    // its 300-row buffer, below the rows anyone reads. Our buffer is the
    // window alone: those pixels are dropped (collisions still latch).
    const uint32_t window_end = (uint32_t)t.config.height * kScreenWidth;
    if (count != 0) {
      draw_pixels(t, piece_start + (uint32_t)count <= window_end ? frame : nullptr, h - kHBlankClocks, count);
      t.frame_pixel += count;
    }
    // The HMOVE bar is painted after drawing, so pixels under it still
    // collided; Stella clears (76 - h) bytes from the piece start.
    if (t.hmove_blank_pending && h < kHBlankClocks + 8) {
      const int blanks = kHBlankClocks + 8 - h;
      if (frame && piece_start + (uint32_t)blanks <= window_end) fill_bytes(frame + piece_start, 0, blanks);
      if (count + h >= kHBlankClocks + 8) t.hmove_blank_pending = 0;
    }
    if (t.clocks_to_end_of_line == kClocksPerLine) end_of_line(t);
  } while (t.last_update_clock < clock);
}
#else
// updateFrame: make the picture final up to colour clock `clock` (TIA::updateFrame).
// Written for few conditional branches, since which way each goes depends on
// where in the line the kernel wrote: the three reasons to draw nothing are
// one test, a piece's length and its start past HBLANK are selects, and
// whether the piece ends the line decides both the line's bookkeeping and
// whether another piece follows.
CULE_CATCH_UP void render_to(Tia& t, uint8_t* frame, int32_t clock) {
  if ((clock < t.start_display_clock) | (t.last_update_clock >= t.stop_display_clock) |
      (t.last_update_clock >= clock))
    return;
  clock = clock > t.stop_display_clock ? t.stop_display_clock : clock;
  // A reset during a partial frame leaves lastUpdate at the frame's line 0
  // (TIA::reset, TIA::frameReset), so Stella draws up to YStart lines more than the window into
  // its 300-row buffer, below the rows anyone reads. Our buffer is the
  // window alone: those pixels are dropped (collisions still latch).
  const uint32_t window_end = (uint32_t)t.config.height * kScreenWidth;
  for (;;) {
    const int to_end = t.clocks_to_end_of_line;
    const int h_from = kClocksPerLine - to_end;
    // Strict '>': a target exactly at a line end leaves clocks_to_end_of_line
    // at 0, deferring the end-of-line work to the next call (TIA::updateFrame).
    const int32_t wanted = clock - t.last_update_clock;
    const bool ends_line = wanted > to_end;
    const int clocks = wanted < to_end ? wanted : to_end;
    t.clocks_to_end_of_line = ends_line ? kClocksPerLine : to_end - clocks;
    t.last_update_clock += clocks;
    // Clocks inside HBLANK draw nothing: h is where the piece's pixels (and
    // the HMOVE bar's test) start.
    const int h_visible = h_from + clocks < kHBlankClocks ? h_from + clocks : kHBlankClocks;
    const int h = h_from > h_visible ? h_from : h_visible;
    const int count = clocks - (h - h_from);
    const uint32_t piece_start = t.frame_pixel;
    if (count != 0) {
      draw_pixels(t, piece_start + (uint32_t)count <= window_end ? frame : nullptr, h - kHBlankClocks, count);
      t.frame_pixel += count;
    }
    // The HMOVE bar is painted after drawing, so pixels under it still
    // collided; Stella clears (76 - h) bytes from the piece start.
    if ((t.hmove_blank_pending != 0) & (h < kHBlankClocks + 8)) {
      const int blanks = kHBlankClocks + 8 - h;
      if (frame && piece_start + (uint32_t)blanks <= window_end) fill_bytes(frame + piece_start, 0, blanks);
      t.hmove_blank_pending = (uint8_t)(count + h < kHBlankClocks + 8);
    }
    // A piece that ends its line leaves clock further on; one that does not reaches it.
    if (!ends_line) return;
    end_of_line(t);
  }
}
#endif

// Sums and differences of colour clocks wrap at 32 bits, as Stella's Int32
// arithmetic does on the machines ALE runs on (a ROM that never ends a frame
// runs past 2^31 clocks; one that never writes HMOVE leaves the last HMOVE
// clock drifting back 3 x cycles every frame, through -2^31 after some 30,000
// frames). Written out in uint32 so they are defined without -fwrapv (nvcc,
// NVRTC, sanitizer builds); the results are those of the -fwrapv build.
CULE_HD int32_t clock_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
CULE_HD int32_t clock_sub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }

// Horizontal clock of colour clock c within its line.
CULE_HD int hpos_of(const Tia& t, int32_t clock) {
  return (int)((uint32_t)clock_sub(clock, t.frame_start_clock) % kClocksPerLine);
}

// RESPx: the relation of the new position to the copies of the old (computePlayerPositionResetWhenTable):
// -1 in the 4 clocks before a copy starts, +1 while a copy is drawn, else 0.
CULE_HD int player_reset_when(int mode, int old_pos, int new_pos) {
  const int d = wrap160(new_pos - old_pos);
  const int width = mode == 5 ? 16 : mode == 7 ? 32 : 8;
  const int m = mode == 5 || mode == 7 ? 0 : mode;
  if (in_copy(m, d, 4)) return -1;
  if (d >= 4 && in_copy(m, d - 4, width)) return 1;
  return 0;
}

CULE_HD void update_player_enables(Tia& t) {
  const uint8_t g0 = t.vdelp0 ? t.dgrp0 : t.grp0;
  const uint8_t g1 = t.vdelp1 ? t.dgrp1 : t.grp1;
  t.current_grp0 = t.refp0 ? reflect_byte(g0) : g0;
  t.current_grp1 = t.refp1 ? reflect_byte(g1) : g1;
  t.enabled_objects = (uint8_t)((t.enabled_objects & ~(kP0Bit | kP1Bit)) | (t.current_grp0 ? kP0Bit : 0) |
                                (t.current_grp1 ? kP1Bit : 0));
}
CULE_HD void set_enabled(Tia& t, uint8_t bit, bool on) {
  t.enabled_objects = on ? (uint8_t)(t.enabled_objects | bit) : (uint8_t)(t.enabled_objects & ~bit);
}
CULE_HD void update_ball_enable(Tia& t) { set_enabled(t, kBLBit, t.vdelbl ? t.denabl : t.enabl); }

CULE_HD uint8_t colour_register(const Tia& t, uint8_t value) {
  uint8_t c = value & 0xFE;
  if (t.config.color_loss && (t.scanline_count_last_frame & 1)) c |= 1;
  return c;
}

// hmove_motion past the line's first cycles, where the motion depends on
// the cycle. Kept apart so that hmove_motion's common case is small enough
// for g++ to inline into HMOVE, which kernels write on most lines.
CULE_HD int hmove_motion_within_line(int i, int n, int signed_motion) {
  if (i <= 20) {
    // Early HMOVE, after the first clocks: leftward moves saturate at a
    // limit that shrinks, then rightward extras appear (rows 4-20).
    if (n >= 8) {
      const int floor_by_row[21] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 4, 4, 5, 6};
      const int f = floor_by_row[i];
      return signed_motion > f ? signed_motion : f;
    }
    const int limit_by_row[21] = {-7, -7, -7, -7, -6, -5, -5, -4, -3, -2, -2, -1, 0, 1, 1, 2, 3, 4, 4, 5, 6};
    const int lim = limit_by_row[i];
    if (i >= 12) return lim;  // rows 12-20: every non-negative nibble gives the same
    return signed_motion > lim ? signed_motion : lim;
  }
  if (i <= 54) return 0;
  // Late HMOVE (rows 55-74): extra leftward motion of (k) for the first
  // eight nibbles, and a shifted ramp for nibbles 8-15.
  const int start_by_row[20] = {7, 6, 5, 5, 4, 3, 2, 2, 1, 0, -1, -1, -2, -3, -4, -4, -5, -6, -7, -7};
  const int s = start_by_row[i - 55];  // column where the ramp reaches -1 in the low half
  if (n < 8) return n >= s ? -(n - s + 1) : 0;
  return (n - 8) >= s + 8 ? -((n - 8) - (s + 8) + 1) : 0;
}

// The motion applied by HMOVE at CPU cycle-in-line i for nibble n (ourCompleteMotionTable).
// Kernels write HMOVE right after WSYNC, so the first case is the common one.
// Where HMOVE moves an object by its nibble alone (the first case below).
CULE_HD bool hmove_moves_by_nibble(int i) { return i <= 3 || i == 75; }
CULE_HD int hmove_motion(int i, int n) {
  const int signed_motion = n < 8 ? -n : 16 - n;  // S: -(signed nibble)
  if (hmove_moves_by_nibble(i)) return signed_motion;
  return hmove_motion_within_line(i, n, signed_motion);
}

// Stella's HMOVE blank enable table: CPU cycles 0-20 and 75 of a line.
CULE_HD bool hmove_blanks_at(int i) { return i <= 20 || i == 75; }

// The later of two colour clocks (they wrap at 32 bits, see clock_add).
CULE_HD int32_t later(int32_t a, int32_t b) { return clock_sub(a, b) > 0 ? a : b; }

// The TIA's registers by their data-sheet names: writes decode A5-A0,
// reads A3-A0 (the other address bits are mirrors).
namespace reg {
enum Write : uint8_t {
  VSYNC = 0x00, VBLANK, WSYNC, RSYNC, NUSIZ0, NUSIZ1, COLUP0, COLUP1, COLUPF, COLUBK, CTRLPF, REFP0, REFP1, PF0, PF1,
  PF2, RESP0, RESP1, RESM0, RESM1, RESBL, AUDC0, AUDC1, AUDF0, AUDF1, AUDV0, AUDV1, GRP0, GRP1, ENAM0, ENAM1, ENABL,
  HMP0, HMP1, HMM0, HMM1, HMBL, VDELP0, VDELP1, VDELBL, RESMP0, RESMP1, HMOVE, HMCLR, CXCLR,
};
enum Read : uint8_t {
  CXM0P = 0x00, CXM1P, CXP0FB, CXP1FB, CXM0FB, CXM1FB, CXBLPF, CXPPMM, INPT0, INPT1, INPT2, INPT3, INPT4, INPT5,
};
}  // namespace reg

// Applies a TIA register write (TIA::poke). `cycles` is the system clock at
// the end of the writing instruction. Stella first draws the picture up to
// the write's clock plus the register's delay, then applies the write. A
// write that changes nothing the drawing reads (WSYNC, audio, motion
// registers, a value the register already holds) leaves that catch-up to
// the next access that does, which draws the same pixels in one piece
// instead of several: `due` carries the furthest target owed so far, every
// catch-up goes at least that far, and the frame's caller settles it when
// its accesses stop (settle).
//
// `W` names the register, or is kAnyRegister to take it from the address.
// The host compiles one function per register (kPokes below), each
// with its own case alone and the few registers that case needs saved,
// where one function of every case saved all of them at each call; the
// device keeps one out-of-line copy of the whole switch (poke).
constexpr int kAnyRegister = -1;
template <int W>
CULE_REGISTER_ACCESS PokeResult poke_register(Tia& t, uint8_t* frame, uint16_t address, uint8_t value, uint32_t cycles,
                                              bool last_access_was_read, int32_t due) {
  uint32_t stall_cycles = 0;
  int32_t new_due = due;
  uint8_t ends = 0;
  const uint8_t which = W == kAnyRegister ? address & 0x3F : (uint8_t)W;
  const int32_t clock = (int32_t)(cycles * 3);
  // Past the scanline cap: line (clock - frame start) / 228 > max_scanlines, without the division.
  if ((uint32_t)clock_sub(clock, t.frame_start_clock) >= ((uint32_t)t.config.max_scanlines + 1) * kClocksPerLine) {
    ends = kEndsFrame;  // scanline cap: the write itself still applies (the cap in TIA::poke)
    t.partial_frame = 0;
  }
  // Owes the catch-up to clock + delay; draws it now when the write changes the picture.
  auto catch_up = [&](int delay, bool changes_picture) CULE_LAMBDA_INLINE {
    new_due = later(due, clock_add(clock, delay));
    if (changes_picture) render_to(t, frame, new_due);
  };
  switch (which) {
    case reg::VSYNC:  // the frame ends when it is cleared >= 228 clocks after being set
      catch_up(0, true);
      t.vsync = value;
      if (value & 0x02) {
        t.vsync_finish_clock = clock_add(clock, kClocksPerLine);
      } else if (clock >= t.vsync_finish_clock) {
        t.vsync_finish_clock = kNoVsyncFinish;
        ends = kEndsFrame;
        t.partial_frame = 0;
      }
      break;
    case reg::VBLANK:  // D7 dumps the paddle capacitors
      catch_up(1, true);
      if (!(t.vblank & 0x80) && (value & 0x80)) t.dump_enabled = 1;
      if ((t.vblank & 0x80) && !(value & 0x80)) {
        t.dump_enabled = 0;
        t.dump_disabled_cycle = (int32_t)cycles;
      }
      t.vblank = value;
      break;
    case reg::WSYNC:  // halts only after a read cycle (TIA::poke WSYNC; M6502's last access)
      catch_up(0, false);
      ends |= kEndsLine;
      if (last_access_was_read) {
        const uint32_t k = 76 - (uint32_t)((cycles - (uint32_t)(t.frame_start_clock / 3)) % 76);
        if (k < 76) stall_cycles = k;
      }
      break;
    case reg::NUSIZ0:
      catch_up(8, true);
      t.nusiz0 = value;
      t.mask_p0 = make_mask(t.pos_p0, value & 7, 0, kMaskNormal);
      t.mask_m0 = missile_mask_for(t.pos_m0, value);
      break;
    case reg::NUSIZ1:
      catch_up(8, true);
      t.nusiz1 = value;
      t.mask_p1 = make_mask(t.pos_p1, value & 7, 0, kMaskNormal);
      t.mask_m1 = missile_mask_for(t.pos_m1, value);
      break;
    case reg::COLUP0: case reg::COLUP1: case reg::COLUPF: case reg::COLUBK: {
      uint8_t& colour = which == reg::COLUP0   ? t.colup0
                        : which == reg::COLUP1 ? t.colup1
                        : which == reg::COLUPF ? t.colupf
                                               : t.colubk;
      const uint8_t c = colour_register(t, value);
      catch_up(0, c != colour);
      colour = c;
      break;
    }
    case reg::CTRLPF:  // reflection switches at once only before the middle
      catch_up(0, true);
      t.ctrlpf = value;
      t.priority_score = (uint8_t)((value & 0x06) << 5);
      if (hpos_of(t, clock) < kHBlankClocks + 79) t.pf_reflected = value & 0x01;
      t.mask_bl = ball_mask_for(t.pos_bl, value);
      break;
    case reg::REFP0: case reg::REFP1: {
      uint8_t& ref = which == reg::REFP0 ? t.refp0 : t.refp1;
      uint8_t& current = which == reg::REFP0 ? t.current_grp0 : t.current_grp1;
      const bool flips = ((value & 0x08) != 0) != (ref != 0);
      catch_up(1, flips);
      if (flips) {
        ref = value & 0x08;
        current = reflect_byte(current);
      }
      break;
    }
    case reg::PF0: case reg::PF1: case reg::PF2: {
      // Delayed by 4, 5, 2 or 3 clocks as the CPU cycle mod 4 is 0-3. Computed,
      // not looked up: a local table is stored as one 16-byte word and read
      // back as 4 bytes, which misses store-to-load forwarding on the host.
      const int delay = ((int)((hpos_of(t, clock) / 3) & 3) ^ 2) + 2;
      const uint32_t pf = which == reg::PF0 ? (t.pf & 0x000FFFF0u) | ((value >> 4) & 0x0F)
                          : which == reg::PF1 ? (t.pf & 0x000FF00Fu) | ((uint32_t)value << 4)
                                        : (t.pf & 0x00000FFFu) | ((uint32_t)value << 12);
      catch_up(delay, pf != t.pf);
      t.pf = pf;
      set_enabled(t, kPFBit, pf != 0);
      break;
    }
    case reg::RESP0: case reg::RESP1: {
      catch_up(0, true);
      const int h = hpos_of(t, clock);
      const int new_pos = h < kHBlankClocks ? 3 : (h - kHBlankClocks + 5) % 160;
      int16_t& pos = which == reg::RESP0 ? t.pos_p0 : t.pos_p1;
      const uint8_t mode = (which == reg::RESP0 ? t.nusiz0 : t.nusiz1) & 7;
      const int when = player_reset_when(mode, pos, new_pos);
      if (when == 1) render_to(t, frame, clock_add(clock, 11));
      pos = (int16_t)new_pos;
      (which == reg::RESP0 ? t.mask_p0 : t.mask_p1) =
          make_mask(new_pos, mode, 0, when == -1 ? kMaskNormal : kMaskSkipFirstCopy);
      break;
    }
    case reg::RESM0: {  // with Stella's Dolphin hack (TIA::poke RESM0)
      catch_up(8, true);
      const int h = hpos_of(t, clock);
      t.pos_m0 = (int16_t)(h < kHBlankClocks ? 2 : (h - kHBlankClocks + 4) % 160);
      if (clock_sub(clock, t.last_hmove_clock) == 20 * 3 && h == 69) t.pos_m0 = 8;
      t.mask_m0 = missile_mask_for(t.pos_m0, t.nusiz0);
      break;
    }
    case reg::RESM1: {  // with the Pitfall II hack
      catch_up(8, true);
      const int h = hpos_of(t, clock);
      t.pos_m1 = (int16_t)(h < kHBlankClocks ? 2 : (h - kHBlankClocks + 4) % 160);
      if (clock_sub(clock, t.last_hmove_clock) == 3 * 3 && h == 18) t.pos_m1 = 3;
      t.mask_m1 = missile_mask_for(t.pos_m1, t.nusiz1);
      break;
    }
    case reg::RESBL: {  // with the per-game hacks of 4.5
      catch_up(0, true);
      const int h = hpos_of(t, clock);
      const int32_t since_hmove = clock_sub(clock, t.last_hmove_clock);
      t.pos_bl = (int16_t)(h < kHBlankClocks ? 2 : (h - kHBlankClocks + 4) % 160);
      if (since_hmove == 18 * 3 && (h == 60 || h == 69)) t.pos_bl = 10;
      else if (since_hmove == 3 * 3 && h == 18) t.pos_bl = 3;
      else if (since_hmove == 7 * 3 && h == 30) t.pos_bl = 6;
      else if (since_hmove == 6 * 3 && h == 27) t.pos_bl = 5;
      t.mask_bl = ball_mask_for(t.pos_bl, t.ctrlpf);
      break;
    }
    case reg::GRP0:  // also latches GRP1 into its delay register; shown: GRP0 unless VDELP0, DGRP1 if VDELP1
      catch_up(1, (!t.vdelp0 && value != t.grp0) || (t.vdelp1 && t.dgrp1 != t.grp1));
      t.grp0 = value;
      t.dgrp1 = t.grp1;
      update_player_enables(t);
      break;
    case reg::GRP1:  // latches GRP0 and ENABL
      catch_up(1, (!t.vdelp1 && value != t.grp1) || (t.vdelp0 && t.dgrp0 != t.grp0) ||
                      (t.vdelbl && t.denabl != t.enabl));
      t.grp1 = value;
      t.dgrp0 = t.grp0;
      t.denabl = t.enabl;
      update_player_enables(t);
      update_ball_enable(t);
      break;
    case reg::ENAM0: case reg::ENAM1: {  // a missile locked to its player stays hidden
      const bool m0 = which == reg::ENAM0;
      uint8_t& enable = m0 ? t.enam0 : t.enam1;
      const uint8_t lock = m0 ? t.resmp0 : t.resmp1;
      catch_up(0, (value & 0x02) != enable && !lock);
      enable = value & 0x02;
      set_enabled(t, m0 ? kM0Bit : kM1Bit, enable && !lock);
      break;
    }
    case reg::ENABL:  // with VDELBL the delayed copy shows
      catch_up(0, !t.vdelbl && (value & 0x02) != t.enabl);
      t.enabl = value & 0x02;
      update_ball_enable(t);
      break;
    case reg::HMP0: catch_up(0, false); t.hmp0 = value >> 4; break;
    case reg::HMP1: catch_up(0, false); t.hmp1 = value >> 4; break;
    case reg::HMM0: {  // a 7 -> 6 change 21 CPU cycles after HMOVE arms the Cosmic Ark bug
      const uint8_t n = value >> 4;
      const bool arms = clock == clock_add(t.last_hmove_clock, 21 * 3) && t.hmm0 == 7 && n == 6;
      catch_up(0, arms);
      if (arms) {
        t.cosmic_ark = 1;
        t.cosmic_ark_counter = 0;
      }
      t.hmm0 = n;
      break;
    }
    case reg::HMM1: catch_up(0, false); t.hmm1 = value >> 4; break;
    case reg::HMBL: catch_up(0, false); t.hmbl = value >> 4; break;
    case reg::VDELP0: catch_up(0, true); t.vdelp0 = value & 0x01; update_player_enables(t); break;
    case reg::VDELP1: catch_up(0, true); t.vdelp1 = value & 0x01; update_player_enables(t); break;
    case reg::VDELBL: catch_up(0, true); t.vdelbl = value & 0x01; update_ball_enable(t); break;
    case reg::RESMP0: case reg::RESMP1: {  // releasing the lock centres the missile on its player
      catch_up(0, true);
      const bool m0 = which == reg::RESMP0;
      uint8_t& lock = m0 ? t.resmp0 : t.resmp1;
      if (lock && !(value & 0x02)) {
        const uint8_t nusiz = m0 ? t.nusiz0 : t.nusiz1;
        const int middle = (nusiz & 7) == 5 ? 8 : (nusiz & 7) == 7 ? 16 : 4;
        int16_t& pos = m0 ? t.pos_m0 : t.pos_m1;
        pos = (int16_t)(((m0 ? t.pos_p0 : t.pos_p1) + middle) % 160);
        (m0 ? t.mask_m0 : t.mask_m1) = missile_mask_for(pos, nusiz);
      }
      lock = value & 0x02;
      if (m0) set_enabled(t, kM0Bit, t.enam0 && !t.resmp0);
      else set_enabled(t, kM1Bit, t.enam1 && !t.resmp1);
      break;
    }
    case reg::HMOVE: {
      catch_up(0, true);
      const int i = hpos_of(t, clock) / 3;
      if (t.config.hmove_blanks && hmove_blanks_at(i)) t.hmove_blank_pending = 1;
      auto move = [i](int16_t& pos, uint8_t n) CULE_LAMBDA_INLINE {
        const int p = pos + hmove_motion(i, n);
        pos = (int16_t)(p >= 160 ? p - 160 : p < 0 ? p + 160 : p);
      };
      // Where an object moves by its nibble alone, nothing moves after HMCLR: kernels that write HMOVE at
      // every line's start skip the five moves.
      if (!hmove_moves_by_nibble(i) || (t.hmp0 | t.hmp1 | t.hmm0 | t.hmm1 | t.hmbl)) {
        move(t.pos_p0, t.hmp0);
        move(t.pos_p1, t.hmp1);
        move(t.pos_m0, t.hmm0);
        move(t.pos_m1, t.hmm1);
        move(t.pos_bl, t.hmbl);
      }
      t.mask_bl = ball_mask_for(t.pos_bl, t.ctrlpf);
      rebuild_player_masks(t);
      t.mask_m0 = missile_mask_for(t.pos_m0, t.nusiz0);
      t.mask_m1 = missile_mask_for(t.pos_m1, t.nusiz1);
      t.last_hmove_clock = clock;
      t.cosmic_ark = 0;
      break;
    }
    case reg::HMCLR: catch_up(0, false); t.hmp0 = t.hmp1 = t.hmm0 = t.hmm1 = t.hmbl = 0; break;
    case reg::CXCLR: catch_up(0, true); t.collision = 0; break;
    default: catch_up(0, false); break;  // RSYNC, audio and unused addresses: nothing drawn depends on them
  }
  return PokeResult{stall_cycles, new_due, ends};
}

CULE_HD PokeResult poke(Tia& t, uint8_t* frame, uint16_t address, uint8_t value, uint32_t cycles,
                        bool last_access_was_read, int32_t due) {
  return poke_register<kAnyRegister>(t, frame, address, value, cycles, last_access_was_read, due);
}

#if !CULE_DEVICE_CODE
using PokeFunction = PokeResult (*)(Tia&, uint8_t*, uint16_t, uint8_t, uint32_t, bool, int32_t);
template <int W>
CULE_IO PokeResult poke_one(Tia& t, uint8_t* frame, uint16_t address, uint8_t value, uint32_t cycles,
                            bool last_access_was_read, int32_t due) {
  return poke_register<W>(t, frame, address, value, cycles, last_access_was_read, due);
}
template <int... W>
constexpr std::array<PokeFunction, sizeof...(W)> poke_table(std::integer_sequence<int, W...>) {
  return {&poke_one<W>...};
}
// A write's function by the register's 6 address bits.
inline constexpr std::array<PokeFunction, 64> kPokes = poke_table(std::make_integer_sequence<int, 64>{});
#endif

CULE_HD uint8_t input_pin(const Tia& t, int32_t r, uint32_t cycles, uint8_t noise) {
  if (r == kMinResistance) return 0x80 | noise;  // charged at once, even while dumped
  if (r == kMaxResistance || t.dump_enabled) return noise;
  const uint32_t needed = (uint32_t)((1.6 * r * 0.01E-6) * 1.19E6);
  // Unsigned on purpose: a release in an earlier frame can wrap (TIA::peek's INPT0-3 dump timing).
  return cycles > (uint32_t)t.dump_disabled_cycle + needed ? (uint8_t)(0x80 | noise) : noise;
}

// A TIA read (6): bits 5-0 are the previous data-bus byte. Only the
// collision latches depend on the picture, so only their reads catch it up
// (to the read's clock, or further if a write's catch-up is still owed: see
// poke); the caller owes the read's clock otherwise.
CULE_REGISTER_ACCESS uint8_t peek(Tia& t, uint8_t* frame, uint16_t address, uint32_t cycles, uint8_t data_bus,
                        const TiaInputs& in, int32_t due) {
  const uint8_t noise = data_bus & 0x3F;
  const uint8_t which = address & 0x0F;
  if (which < reg::INPT0) {
    render_to(t, frame, later(due, (int32_t)(cycles * 3)));
    // Two latch bits per register, D7 then D6, except CXBLPF (6) which has
    // one; so CXPPMM (7) reads bits 13 and 14.
    const int bit = which == reg::CXPPMM ? 13 : which * 2;
    uint8_t v = ((t.collision >> bit) & 1) ? 0x80 : 0x00;
    if (which != reg::CXBLPF && ((t.collision >> (bit + 1)) & 1)) v |= 0x40;
    return v | noise;
  }
  if (which < reg::INPT4) return input_pin(t, in.resistance[which - reg::INPT0], cycles, noise);
  if (which <= reg::INPT5) return in.fire[which - reg::INPT4] ? (uint8_t)(0x80 | noise) : noise;
  return noise;
}

// Draws what the accesses of a frame (or of the part of one a call ran)
// still owe the picture, once they stop.
CULE_HD void settle(Tia& t, uint8_t* frame, int32_t due) { render_to(t, frame, due); }

// TIA::reset then TIA::frameReset: everything to zero, masks at position 0.
CULE_HD void reset(Tia& t, const TiaConfig& config, uint32_t cycles) {
  const uint8_t keep_partial = t.partial_frame;  // reset() never touches it
  const uint8_t keep_buffer = t.current_buffer;
  Tia zero{};
  t = zero;
  t.config = config;
  t.partial_frame = keep_partial;
  t.current_buffer = keep_buffer;
  t.mask_m0 = missile_mask_for(0, 0);
  t.mask_m1 = missile_mask_for(0, 0);
  t.mask_bl = ball_mask_for(0, 0);
  rebuild_player_masks(t);
  t.frame_start_clock = (int32_t)(cycles * 3);
  t.start_display_clock = t.frame_start_clock + kClocksPerLine * config.ystart;
  t.stop_display_clock = t.start_display_clock + kClocksPerLine * config.height;
  t.last_update_clock = t.frame_start_clock;
  t.clocks_to_end_of_line = kClocksPerLine;
  t.vsync_finish_clock = kNoVsyncFinish;
  t.pf_bits_key = ~0u;
}

// systemCyclesReset: the system clock restarts at 0; keep times relative.
CULE_HD void rebase_cycles(Tia& t, uint32_t cycles) {
  const uint32_t clocks = cycles * 3;
  t.dump_disabled_cycle = (int32_t)((uint32_t)t.dump_disabled_cycle - cycles);
  t.frame_start_clock = (int32_t)((uint32_t)t.frame_start_clock - clocks);
  t.start_display_clock = (int32_t)((uint32_t)t.start_display_clock - clocks);
  t.stop_display_clock = (int32_t)((uint32_t)t.stop_display_clock - clocks);
  t.last_update_clock = (int32_t)((uint32_t)t.last_update_clock - clocks);
  t.vsync_finish_clock = (int32_t)((uint32_t)t.vsync_finish_clock - clocks);
  t.last_hmove_clock = (int32_t)((uint32_t)t.last_hmove_clock - clocks);
}

// The second half of TIA::startFrame, after the console rebased every
// device and zeroed the clock: line 0 begins `phase` clocks ago.
CULE_HD void begin_frame(Tia& t, uint32_t phase) {
  t.current_buffer ^= 1;
  t.frame_start_clock = -(int32_t)phase;
  t.start_display_clock = t.frame_start_clock + kClocksPerLine * t.config.ystart;
  t.stop_display_clock = t.start_display_clock + kClocksPerLine * t.config.height;
  t.last_update_clock = t.start_display_clock;
  t.clocks_to_end_of_line = kClocksPerLine;
  t.frame_pixel = 0;
  if (t.config.color_loss) {
    const uint8_t odd = t.scanline_count_last_frame & 1;
    t.colup0 = (uint8_t)((t.colup0 & 0xFE) | odd);
    t.colup1 = (uint8_t)((t.colup1 & 0xFE) | odd);
    t.colupf = (uint8_t)((t.colupf & 0xFE) | odd);
    t.colubk = (uint8_t)((t.colubk & 0xFE) | odd);
  }
  t.frame_greyed = 0;
}

CULE_HD uint32_t scanlines(const Tia& t, uint32_t cycles) {
  return (uint32_t)(cycles * 3 - (uint32_t)t.frame_start_clock) / kClocksPerLine;
}

// A frame the CPU did not finish within its instruction budget is greyed
// once from the current line down (TIA::update).
CULE_HD void grey_out(const Tia& t, uint8_t* frame, uint32_t cycles) {
  if (!frame) return;
  uint32_t line = scanlines(t, cycles);
  if (line < t.config.ystart) line = t.config.ystart;
  for (uint32_t s = line; s < (uint32_t)t.config.ystart + t.config.height; ++s)
    for (int x = 0; x < kScreenWidth; ++x) {
      uint8_t& p = frame[(s - t.config.ystart) * kScreenWidth + x];
      p = (uint8_t)((p & 0x0F) >> 1);
    }
}

}  // namespace tia
}  // namespace cule
