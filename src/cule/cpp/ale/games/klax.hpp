// Klax: score, misses, mode and level live in the SuperChip cart RAM; the
// episode also ends when the 25-cell bin is full.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Klax : SelectModeGame<Klax> {
  enum { kScore };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.cart_ram(0xF0EA) == mode; }
  CULE_HD static int starting_action(int i) { return i == 0 ? 1 : i == 1 ? 0 : -1; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static int cart_bcd(const GameView& v, int a) { return 10 * (v.cart_ram(a) >> 4) + (v.cart_ram(a) & 0xF); }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = cart_bcd(v, 0xF0B4) + 100 * cart_bcd(v, 0xF0B5) + 10000 * cart_bcd(v, 0xF0B6);
    game::take_score(g, kScore, score);
    const int misses = v.cart_ram(0xF0EE), max_misses = v.cart_ram(0xF0E9);
    int blocks = 0;
    for (int i = 0; i < 25; ++i) {
      const int cell = v.ram(0xB3 + i);
      // 0, 2, 6, 10 and 14 are the empty-cell values
      if (cell != 0 && cell != 2 && cell != 6 && cell != 10 && cell != 14) ++blocks;
    }
    const bool bin_full = v.ram(0xA8) == 4 && blocks == 25;
    g.terminal = (max_misses > 0 && misses == max_misses) || bin_full || v.cart_ram(0xF09D) == 0x99;
  }
};

}  // namespace cule::games
