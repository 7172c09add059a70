// Flag Capture: modes start at 8; the episode ends when the timer runs out.
#pragma once
#include "game.hpp"

namespace cule::games {

struct FlagCapture : SelectModeGame<FlagCapture> {
  enum { kScore };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xD6) == mode; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd1(v, 0xEA);
    game::take_score(g, kScore, score);
    g.terminal = game::bcd1(v, 0xEB) == 0;
  }
};

}  // namespace cule::games
