// Tron Deadly Discs: lives are 5 minus the hit count.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Trondead : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 5;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xBF, 0xBE, 0xBD);
    game::take_score(g, kScore, score);
    const int hits = v.ram(0xC8);
    g.terminal = hits == 5;
    g.member[kLives] = 5 - hits;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
