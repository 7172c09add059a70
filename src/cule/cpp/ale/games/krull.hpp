// Krull: game over needs three RAM bytes to agree.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Krull : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0x9E, 0x9D, 0x9C);
    game::take_score(g, kScore, score);
    const int lives_byte = v.ram(0x9F);
    g.terminal = lives_byte == 0 && v.ram(0xA2) == 0x03 && v.ram(0x80) == 0x80;
    g.member[kLives] = (lives_byte & 0x7) + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
