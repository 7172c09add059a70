// Adventure: the reward is never cleared once the chalice is home; modes are
// reached by SELECT held for a random time (the level-3 layout seeds from it).
#pragma once
#include "ale/ale.hpp"  // action names
#include "game.hpp"

namespace cule::games {

struct Adventure : GameDefaults {
  CULE_HD static int mode_of(const GameView& v) { return (v.ram(0xDD) >> 1) & 3; }
  template <class Env>
  CULE_HD static void set_mode(Env& env, int mode) {
    for (int presses = 0; mode_of(env.view()) != mode; ++presses) {
      if (presses == kMaxSelectPresses) {  // ALE would spin forever here
        env.s.mode_error = 1;
        break;
      }
      env.press_select(2 + (int)(env.rng.next() % 256));
      env.act(kNoop, kPlayerBNoop);  // the game debounces SELECT
    }
    env.soft_reset();
  }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const bool chalice_home = v.ram(0xB9) == 0x12;
    if (chalice_home) g.reward = 1;
    g.terminal = v.ram(0xE0) == 2 || chalice_home;
  }
  CULE_HD static int lives(const GameState&) { return 1; }
};

}  // namespace cule::games
