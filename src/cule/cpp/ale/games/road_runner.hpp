// Road Runner: one score digit per byte (low nibble, 0xA reads as 0), in
// hundreds.
#pragma once
#include "game.hpp"

namespace cule::games {

struct RoadRunner : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    int score = 0;
    for (int a = 0xCC; a >= 0xC9; --a) {
      const int d = v.ram(a) & 0xF;
      score = 10 * score + (d == 0xA ? 0 : d);
    }
    score *= 100;
    game::take_score(g, kScore, score);
    const int lives_bits = v.ram(0xC4) & 0x7;
    g.terminal = lives_bits == 0 && (v.ram(0xB9) != 0 || v.ram(0xBD) != 0);
    g.member[kLives] = lives_bits + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
