// Phoenix: five score digits, the lowest in the high nibble of $C7, in tens.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Phoenix : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 5;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = (game::bcd2(v, 0xC8, 0xC9) * 10 + (v.ram(0xC7) >> 4)) * 10;
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0xCC) == 0x80;
    g.member[kLives] = v.ram(0xCB) & 0x7;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
