// Amidar: the lives byte reads 0x80 at game over.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Amidar : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xD9, 0xDA, 0xDB);
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0xD6) == 0x80;
    g.member[kLives] = v.ram(0xD6) & 0xF;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
