// Space Invaders: a score that drops means it wrapped at 10000.
#pragma once
#include "game.hpp"

namespace cule::games {

struct SpaceInvaders : SelectModeGame<SpaceInvaders> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xDC) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd2(v, 0xE8, 0xE6);
    g.reward = score - g.member[kScore];
    if (g.reward < 0) g.reward = (10000 - g.member[kScore]) + score;
    g.member[kScore] = score;
    g.member[kLives] = v.ram(0xC9);
    g.terminal = (v.ram(0x98) & 0x80) != 0 || g.member[kLives] == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
