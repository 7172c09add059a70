// Entombed: the score is the raw depth byte.
#pragma once
#include "ale/ale.hpp"  // action names
#include "game.hpp"

namespace cule::games {

struct Entombed : GameDefaults {
  enum { kScore };
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = v.ram(0xE3);
    game::take_score(g, kScore, score);
    g.terminal = (v.ram(0xC7) & 0x03) == 0;
  }
  // FIRE, then five NOOPs.
  CULE_HD static int starting_action(int i) { return i == 0 ? kFire : i < 6 ? kNoop : -1; }
};

}  // namespace cule::games
