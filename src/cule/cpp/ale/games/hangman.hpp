// Hangman: one word per episode (ends at the first point either way) or when
// the timer byte wraps 255 -> 0, which needs the previous frame's timer.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Hangman : SelectModeGame<Hangman> {
  enum { kComputerScore, kPlayerScore, kTimer, kPrevTimer };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xEE) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kTimer] = -1;
    g.member[kPrevTimer] = -1;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int computer = game::bcd1(v, 0xEC), player = game::bcd1(v, 0xEB);
    g.reward = (player - g.member[kPlayerScore]) - (computer - g.member[kComputerScore]);
    g.member[kComputerScore] = computer;
    g.member[kPlayerScore] = player;
    g.member[kPrevTimer] = g.member[kTimer];
    g.member[kTimer] = v.ram(0xF1);
    const bool timed_out = g.member[kTimer] == 0 && g.member[kPrevTimer] == 255;
    g.terminal = g.reward != 0 || timed_out;
  }
};

}  // namespace cule::games
