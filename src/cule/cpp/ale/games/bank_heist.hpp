// Bank Heist: over when the death flag is up with no lives left.
#pragma once
#include "game.hpp"

namespace cule::games {

struct BankHeist : SelectModeGame<BankHeist> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 1;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x80) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 5;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xDA, 0xD9, 0xD8);
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xD5);
    g.terminal = v.ram(0xCE) == 0x01 && g.member[kLives] == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
