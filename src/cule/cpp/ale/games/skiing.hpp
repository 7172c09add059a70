// Skiing: the reward is minus the elapsed time (centiseconds); FIRE actions
// are illegal; 16 DOWN frames start the run.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Skiing : GameDefaults {
  enum { kTime };
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int time = v.ram(0xE8) * 6000 + game::bcd2(v, 0xEA, 0xE9);
    g.reward = g.member[kTime] - time;
    g.member[kTime] = time;
    g.terminal = v.ram(0x91) == 0xFF;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
  CULE_HD static int starting_action(int i) { return i < 16 ? kDown : -1; }
  CULE_HD static bool is_legal(int a) { return a != kFire && (a < kUpFire || a > kDownLeftFire); }
};

}  // namespace cule::games
