// Kool-Aid Man: the score is in hundreds; no lives.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Koolaid : GameDefaults {
  enum { kScore };
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd2(v, 0x81, 0x80) * 100;
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0xD1) == 0x80;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
};

}  // namespace cule::games
