// Fishing Derby: the score is player minus opponent; no lives.
#pragma once
#include "game.hpp"

namespace cule::games {

struct FishingDerby : GameDefaults {
  enum { kScore };
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd1(v, 0xBD) - game::bcd1(v, 0xBE);
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0xBD) == 0x99 || v.ram(0xBE) == 0x99;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
};

}  // namespace cule::games
