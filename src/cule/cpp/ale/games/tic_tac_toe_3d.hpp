// 3-D Tic-Tac-Toe: the terminal flag is sticky; a full board also ends it.
#pragma once
#include "game.hpp"

namespace cule::games {

struct TicTacToe3d : SelectModeGame<TicTacToe3d> {
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x88) == mode; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    g.reward = 0;
    if (v.ram(0xFF) == 0xF3 && v.ram(0xFE) == 0x10) {
      g.reward = v.ram(0xE1) == 0x08 ? 1 : -1;
      g.terminal = 1;
    }
    for (int a = 0x9A; a <= 0xD9; ++a)
      if (v.ram(a) == 0) return;
    g.terminal = 1;
  }
};

}  // namespace cule::games
