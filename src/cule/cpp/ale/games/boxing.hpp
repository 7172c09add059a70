// Boxing: the score is player minus opponent; 0xC0 means a KO (100 points).
#pragma once
#include "game.hpp"

namespace cule::games {

struct Boxing : GameDefaults {
  enum { kScore };
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static int points(const GameView& v, int a) { return v.ram(a) == 0xC0 ? 100 : game::bcd1(v, a); }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int mine = points(v, 0x92), theirs = points(v, 0x93);
    const int score = mine - theirs;
    game::take_score(g, kScore, score);
    const bool clock_out = (v.ram(0x90) >> 4) == 0 && ((v.ram(0x91) & 0xF) + 10 * (v.ram(0x91) >> 4)) == 0;
    g.terminal = mine == 100 || theirs == 100 || clock_out;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
};

}  // namespace cule::games
