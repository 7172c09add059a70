// Asteroids: the displayed score wraps at 100000, so a drop is a wrap.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Asteroids : SelectModeGame<Asteroids> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x80) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = 10 * game::bcd2(v, 0xBE, 0xBD);
    g.reward = score - g.member[kScore];
    if (g.reward < 0) g.reward += 100000;
    g.member[kScore] = score;
    g.member[kLives] = v.ram(0xBC) >> 4;
    g.terminal = g.member[kLives] == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
