// Journey Escape: the score jump of exactly 50000 at the start is not a
// reward; ends when the clock reads 0:00.
#pragma once
#include "game.hpp"

namespace cule::games {

struct JourneyEscape : GameDefaults {
  enum { kScore };
  CULE_HD static int starting_action(int i) { return i == 0 ? 1 : -1; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0x92, 0x91, 0x90);
    const int r = score - g.member[kScore];
    g.reward = r == 50000 ? 0 : r;
    g.member[kScore] = score;
    g.terminal = v.ram(0x95) == 0 && v.ram(0x96) == 0;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
};

}  // namespace cule::games
