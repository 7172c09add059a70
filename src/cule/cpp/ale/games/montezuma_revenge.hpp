// Montezuma's Revenge: game over needs no reserve lives and the death flag.
#pragma once
#include "game.hpp"

namespace cule::games {

struct MontezumaRevenge : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 6;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0x95, 0x94, 0x93);
    game::take_score(g, kScore, score);
    const int lives_byte = v.ram(0xBA);
    g.terminal = lives_byte == 0 && v.ram(0xFE) == 0x60;
    g.member[kLives] = (lives_byte & 0x7) + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
