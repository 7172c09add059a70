// Video Chess: +1 / -1 when the game reports checkmate; terminal is sticky.
#pragma once
#include "game.hpp"

namespace cule::games {

struct VideoChess : SelectModeGame<VideoChess> {
  static constexpr int kSelectFrames = 1;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xEA) == mode; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    g.reward = 0;
    if (v.ram(0xE1) != 0x82) return;
    if (v.ram(0xEE) == 0x00) {
      g.reward = 1;
      g.terminal = 1;
    } else if (v.ram(0xEE) == 0x01) {
      g.reward = -1;
      g.terminal = 1;
    }
  }
};

}  // namespace cule::games
