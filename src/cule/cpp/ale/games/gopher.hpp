// Gopher: a soft reset before the select loop; lives are the carrots left.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Gopher : SelectModeGame<Gopher> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 5;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xD3) == mode; }
  template <class Env>
  CULE_HD static void before_select(Env& env, int) { env.soft_reset(); }
  CULE_HD static int starting_action(int i) { return i == 0 ? 1 : -1; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xB2, 0xB1, 0xB0);
    game::take_score(g, kScore, score);
    const int carrots = v.ram(0xB4) & 0x7;  // one bit per carrot
    g.terminal = carrots == 0;
    g.member[kLives] = (carrots & 1) + ((carrots >> 1) & 1) + (carrots >> 2);
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
