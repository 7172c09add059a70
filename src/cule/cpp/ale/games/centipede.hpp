// Centipede: negative rewards (score wrap or reset) are clamped to 0.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Centipede : SelectModeGame<Centipede> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xA7) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xF6, 0xF5, 0xF4);
    g.reward = score - g.member[kScore];
    if (g.reward < 0) g.reward = 0;
    g.member[kScore] = score;
    g.member[kLives] = ((v.ram(0xED) >> 4) & 0x7) + 1;
    g.terminal = (v.ram(0xA6) & 0x40) != 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
