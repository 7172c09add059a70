// Video Checkers: the episode ends when one colour has no pieces; reward and
// terminal are never cleared by step(), and modes >= 11 (stored as m + 6)
// play the reversed game, which flips the reward.
#pragma once
#include "game.hpp"

namespace cule::games {

struct VideoCheckers : SelectModeGame<VideoCheckers> {
  enum { kReverse };
  static constexpr int kSelectFrames = 1;
  template <class Env>
  CULE_HD static void before_select(Env& env, int mode) { env.s.game.member[kReverse] = mode >= 11; }
  CULE_HD static bool mode_reached(const GameView& v, int mode) {
    return v.ram(0xF6) == (mode >= 11 ? mode + 6 : mode);
  }
  // reset() leaves the reverse flag alone: setMode, which always follows,
  // sets it.
  CULE_HD static void reset(GameState& g) {
    g.reward = 0;
    g.terminal = 0;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    int black = 0, white = 0;
    for (int a = 0x80; a < 0xA3; ++a) {
      if (a == 0x88 || a == 0x91 || a == 0x9A) continue;  // not board squares
      const int piece = v.ram(a);
      if (piece == 0x10 || piece == 0x20) ++black;
      else if (piece == 0x90 || piece == 0xA0) ++white;
    }
    const int sign = g.member[kReverse] ? -1 : 1;
    if (black == 0) {
      g.reward = -sign;
      g.terminal = 1;
    } else if (white == 0) {
      g.reward = sign;
      g.terminal = 1;
    }
  }
};

}  // namespace cule::games
