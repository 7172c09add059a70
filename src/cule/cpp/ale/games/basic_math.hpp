// Basic Math: one BCD byte of correct answers; over once the end counter is set.
#pragma once
#include "game.hpp"

namespace cule::games {

struct BasicMath : SelectModeGame<BasicMath> {
  enum { kScore };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xC5) == mode; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd1(v, 0x84);
    game::take_score(g, kScore, score);
    g.terminal = game::bcd1(v, 0x86) != 0;
  }
};

}  // namespace cule::games
