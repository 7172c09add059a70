// Galaxian: modes start at 1; a score that drops means it wrapped at 1000000.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Galaxian : SelectModeGame<Galaxian> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 1;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xB3) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xAE, 0xAD, 0xAC);
    g.reward = score - g.member[kScore];
    if (g.reward < 0) g.reward = (1000000 - g.member[kScore]) + score;
    g.member[kScore] = score;
    g.terminal = (v.ram(0xBF) & 0x80) != 0;
    g.member[kLives] = g.terminal ? 0 : v.ram(0xB9) + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
