// Frogger: the mode byte holds 1 + 2 * mode; lives 0xFF means game over.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Frogger : SelectModeGame<Frogger> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xDD) == 1 + 2 * mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd2(v, 0xCE, 0xCC);
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xD0);
    g.terminal = v.ram(0xD0) == 0xFF;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
