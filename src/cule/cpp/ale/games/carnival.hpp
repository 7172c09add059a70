// Carnival: over when the ammunition runs out.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Carnival : GameDefaults {
  enum { kScore };
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = 10 * game::bcd2(v, 0xAE, 0xAD);
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0x83) < 1;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
};

}  // namespace cule::games
