// Freeway: the reward is clamped to [0, 1]; no lives.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Freeway : SelectModeGame<Freeway> {
  enum { kScore };
  static constexpr int kSelectFrames = 1;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x80) == mode; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd1(v, 0xE7);
    const int r = score - g.member[kScore];
    g.reward = r < 0 ? 0 : (r > 1 ? 1 : r);
    g.member[kScore] = score;
    g.terminal = v.ram(0x96) == 1;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
};

}  // namespace cule::games
