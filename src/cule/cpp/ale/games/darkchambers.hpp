// Dark Chambers: sticky game over when the level or score goes backwards or
// health runs out; 486 NOOPs skip the intro.
#pragma once
#include "ale/ale.hpp"  // action names
#include "game.hpp"

namespace cule::games {

struct Darkchambers : GameDefaults {
  enum { kScore, kLevel, kHealth };
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    g.reward = 0;
    const int level = v.ram(0xD5);
    if (level < g.member[kLevel]) {
      g.terminal = 1;
      return;
    }
    g.member[kLevel] = level;
    const int score = 10 * game::bcd2(v, 0xCC, 0xCF);
    if (score < g.member[kScore]) {
      g.terminal = 1;
    } else {
      game::take_score(g, kScore, score);
    }
    g.member[kHealth] = v.ram(0xCA) & 0x1F;
    if (g.member[kHealth] == 0) g.terminal = 1;
  }
  CULE_HD static int starting_action(int i) { return i < 486 ? kNoop : -1; }
};

}  // namespace cule::games
