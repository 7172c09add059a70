// Wizard of Wor: the score's top digit carries a flag (8000 subtracted);
// lives are only read while bit 0 of $D7 is clear.
#pragma once
#include "game.hpp"

namespace cule::games {

struct WizardOfWor : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    int score = game::bcd2(v, 0x86, 0x88);
    if (score >= 8000) score -= 8000;
    score *= 100;
    game::take_score(g, kScore, score);
    const int lives_bits = v.ram(0x8D) & 15;
    g.terminal = lives_bits == 0 && v.ram(0xF4) == 0xF8;
    if ((v.ram(0xD7) & 0x1) == 0) g.member[kLives] = lives_bits;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
