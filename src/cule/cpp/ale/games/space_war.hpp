// Space War: the mode is read from the same BCD byte as the score.
#pragma once
#include "game.hpp"

namespace cule::games {

struct SpaceWar : SelectModeGame<SpaceWar> {
  enum { kScore };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return game::bcd1(v, 0xA7) == mode; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd1(v, 0xA7);
    game::take_score(g, kScore, score);
    g.terminal = score == 10 || v.ram(0x80) == 0;
  }
};

}  // namespace cule::games
