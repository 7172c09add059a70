// Earthworld (SwordQuest): one BCD byte of found items; over at 10.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Earthworld : GameDefaults {
  enum { kScore };
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd1(v, 0xA7);
    game::take_score(g, kScore, score);
    g.terminal = score == 10;
  }
};

}  // namespace cule::games
