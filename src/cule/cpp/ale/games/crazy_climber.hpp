// Crazy Climber: score digits are one per byte (in hundreds); negative
// rewards are clamped to 0.
#pragma once
#include "game.hpp"

namespace cule::games {

struct CrazyClimber : SelectModeGame<CrazyClimber> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x80) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 5;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = 100 * (v.ram(0x82) + 10 * v.ram(0x83) + 100 * v.ram(0x84) + 1000 * v.ram(0x85));
    g.reward = score - g.member[kScore];
    if (g.reward < 0) g.reward = 0;
    g.member[kScore] = score;
    g.member[kLives] = v.ram(0xAA);
    g.terminal = g.member[kLives] == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
