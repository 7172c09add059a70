// Venture: BCD score in hundreds; game over needs three RAM conditions.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Venture : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd2(v, 0xC8, 0xC7) * 100;
    game::take_score(g, kScore, score);
    const int lives_byte = v.ram(0xC6);
    g.terminal = lives_byte == 0 && v.ram(0xCD) == 0xFF && (v.ram(0xBF) & 0x80) != 0;
    g.member[kLives] = (lives_byte & 0x7) + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
