// Seaquest: BCD score; a game-over flag at $A3.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Seaquest : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xBA, 0xB9, 0xB8);
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0xA3) != 0;
    g.member[kLives] = v.ram(0xBB) + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
