// Yars' Revenge: one SELECT press of 2 frames, then 1-frame presses; FIRE
// starts the game.
#pragma once
#include "game.hpp"

namespace cule::games {

struct YarsRevenge : SelectModeGame<YarsRevenge> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 1;
  template <class Env>
  CULE_HD static void before_select(Env& env, int) { env.press_select(2); }
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xE3) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xE2, 0xE1, 0xE0);
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0x9E) >> 4;
    g.terminal = g.member[kLives] == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
  CULE_HD static int starting_action(int i) { return i == 0 ? kFire : -1; }
};

}  // namespace cule::games
