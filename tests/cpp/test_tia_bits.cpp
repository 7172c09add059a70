// C++ checks of the TIA's object bitsets (chips/tia.hpp) against a
// per-pixel reading of Stella's computePlayerMaskTable (TIA.cxx): for every NUSIZ mode,
// position, graphics byte and width, the pixels a player, missile or ball
// lights, with the copies at +0/+16/+32/+64 and the wrap at pixel 160; and
// every piece of a line (span_bits) against the pixels it covers.
#include <cstdio>

#include "chips/tia.hpp"

using namespace cule;

static int g_failures = 0;

// Copy offsets by NUSIZ mode, one list per mode; -1 ends a list. Modes 5
// and 7 are one copy, double and quadruple wide.
static const int kCopies[8][4] = {{0, -1}, {0, 16, -1}, {0, 32, -1}, {0, 16, 32, -1},
                                  {0, 64, -1}, {0, -1}, {0, 32, 64, -1}, {0, -1}};

struct Pixels {
  bool on[160] = {};
  void light(int x) { on[((x % 160) + 160) % 160] = true; }
};

static bool same(const tia::LineBits& b, const Pixels& want, const char* what, int mode, int pos, int arg) {
  for (int x = 0; x < 192; ++x) {
    const bool got = (b.w[x >> 6] >> (x & 63)) & 1;
    const bool expected = x < 160 && want.on[x];
    if (got != expected) {
      if (++g_failures <= 10)
        std::fprintf(stderr, "%s mode %d pos %d arg %d: pixel %d is %d, expected %d\n", what, mode, pos, arg, x,
                     got, expected);
      return false;
    }
  }
  return true;
}

static void test_players() {
  for (int mode = 0; mode < 8; ++mode)
    for (int pos = 0; pos < 160; ++pos)
      for (int grp = 0; grp < 256; ++grp)
        for (int skip = 0; skip < 2; ++skip) {
          Pixels want;
          const bool wide = mode == 5 || mode == 7;
          if (wide) {
            const int rep = mode == 5 ? 2 : 4;  // each bit repeated, starting a pixel late
            if (!skip)
              for (int i = 0; i < 8; ++i)
                if (grp & (0x80 >> i))
                  for (int r = 0; r < rep; ++r) want.light(pos + 1 + i * rep + r);
          } else {
            for (int c = skip; c < 4 && kCopies[mode][c] >= 0; ++c)
              for (int i = 0; i < 8; ++i)
                if (grp & (0x80 >> i)) want.light(pos + kCopies[mode][c] + i);
          }
          ObjectMask m = tia::make_mask(pos, (uint8_t)mode, 0, skip ? kMaskSkipFirstCopy : kMaskNormal);
          if (!same(tia::player_bits(m, (uint8_t)grp), want, "player", mode, pos, grp)) return;
        }
}

static void test_missiles_and_ball() {
  for (int mode = 0; mode < 8; ++mode)
    for (int pos = 0; pos < 160; ++pos)
      for (int size = 0; size < 4; ++size) {
        Pixels want;
        const int copies = mode == 5 || mode == 7 ? 0 : mode;  // wide modes: one missile copy
        for (int c = 0; c < 4 && kCopies[copies][c] >= 0; ++c)
          for (int j = 0; j < (1 << size); ++j) want.light(pos + kCopies[copies][c] + j);
        const ObjectMask m = tia::make_mask(pos, (uint8_t)mode, (uint8_t)size, kMaskNormal);
        if (!same(tia::missile_bits(m), want, "missile", mode, pos, size)) return;
        if (mode == 0) {
          Pixels ball;
          for (int j = 0; j < (1 << size); ++j) ball.light(pos + j);
          if (!same(tia::ball_bits(m), ball, "ball", 0, pos, size)) return;
        }
      }
}

static void test_spans() {
  for (int x = 0; x <= 160; ++x)
    for (int count = 0; x + count <= 160; ++count) {
      Pixels want;
      for (int i = x; i < x + count; ++i) want.light(i);
      if (!same(tia::span_bits(x, count), want, "span", 0, x, count)) return;
    }
}

int main() {
  test_players();
  test_missiles_and_ball();
  test_spans();
  if (g_failures) {
    std::fprintf(stderr, "%d checks failed\n", g_failures);
    return 1;
  }
  std::printf("all checks passed\n");
  return 0;
}
