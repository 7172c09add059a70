// Crossbow: before the game starts the score's low byte holds mode + 1.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Crossbow : SelectModeGame<Crossbow> {
  enum { kScore };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return ((v.ram(0x8D) - 1) & 0xFF) == mode; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0x8D, 0x8C, 0x8B);
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0xE7) == 0x82;
  }
};

}  // namespace cule::games
