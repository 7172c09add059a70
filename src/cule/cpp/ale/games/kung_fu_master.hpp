// Kung-Fu Master: lives byte 0xFF means game over.
#pragma once
#include "game.hpp"

namespace cule::games {

struct KungFuMaster : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0x9A, 0x99, 0x98);
    game::take_score(g, kScore, score);
    const int lives_byte = v.ram(0x9D);
    g.terminal = lives_byte == 0xFF;
    g.member[kLives] = (lives_byte & 0x7) + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
