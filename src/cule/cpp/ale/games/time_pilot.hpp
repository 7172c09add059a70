// Time Pilot: lives are only read while the game-state nibble of $80 is 2.
#pragma once
#include "game.hpp"

namespace cule::games {

struct TimePilot : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 5;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd2(v, 0x8D, 0x8F) * 100;
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0xA0) != 0;
    if ((v.ram(0x80) & 0xF) == 2) g.member[kLives] = (v.ram(0x8B) & 0x7) + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
