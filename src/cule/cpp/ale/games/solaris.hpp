// Solaris: BCD score in tens, most significant byte last.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Solaris : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xDC, 0xDD, 0xDE) * 10;
    game::take_score(g, kScore, score);
    const int lives_byte = v.ram(0xD9);
    g.terminal = lives_byte == 0;
    g.member[kLives] = lives_byte & 0xF;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
