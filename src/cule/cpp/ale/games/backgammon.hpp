// Backgammon: the win is read from the board only when both sides' pieces add
// up to 15 (the computer uses the board as scratch space); counts are int8.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Backgammon : SelectModeGame<Backgammon> {
  static constexpr int32_t kPaddleMax = 1000000;
  static constexpr int kSelectFrames = 1;
  // Only mode 0 exists; SELECT is pressed until the game shows option 3.
  CULE_HD static bool mode_reached(const GameView& v, int) { return v.ram(0xDC) == 3; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void count(const GameView& v, int first, int last, int& in_p, int& in_c) {
    for (int a = first; a <= last; ++a) {
      const int pieces = game::s8(v.ram(a));
      if (pieces > 0) in_c = game::s8((in_c + pieces) & 0xFF);
      else if (pieces < 0) in_p = game::s8((in_p - pieces) & 0xFF);
    }
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int out_p = game::s8(-game::s8(v.ram(0x80)) & 0xFF);
    const int out_c = game::s8(v.ram(0x8E));
    int in_p = 0, in_c = 0;
    count(v, 0x81, 0x8D, in_p, in_c);
    count(v, 0x8F, 0x9B, in_p, in_c);
    if (in_c + out_c != 15 || in_p + out_p != 15) return;
    if (out_p == 15) {
      g.terminal = 1;
      g.reward = 1;
    } else if (out_c == 15) {
      g.terminal = 1;
      g.reward = -1;
    }
  }
};

}  // namespace cule::games
