// Assault: plain BCD score and a lives byte.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Assault : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0x82, 0x81, 0x80);
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xE5);
    g.terminal = g.member[kLives] == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
