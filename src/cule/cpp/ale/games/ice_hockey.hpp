// Ice Hockey: player minus opponent, the reward capped above at 1; ends when
// the clock reads 0:00.
#pragma once
#include "game.hpp"

namespace cule::games {

struct IceHockey : SelectModeGame<IceHockey> {
  enum { kScore };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x80) == mode; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd1(v, 0x8A) - game::bcd1(v, 0x8B);
    const int r = score - g.member[kScore];
    g.reward = r > 1 ? 1 : r;
    g.member[kScore] = score;
    g.terminal = v.ram(0x87) == 0 && v.ram(0x86) == 0;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
};

}  // namespace cule::games
