// Air Raid: the mode byte doubles as the score's low byte; one long SELECT
// press comes before the mode loop.
#pragma once
#include "ale/ale.hpp"  // action names
#include "game.hpp"

namespace cule::games {

struct AirRaid : SelectModeGame<AirRaid> {
  enum { kScore };
  static constexpr int kSelectFrames = 10;
  template <class Env>
  CULE_HD static void before_select(Env& env, int) { env.press_select(20); }
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xAA) == mode; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xAA, 0xA9, 0xA8);
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0xA7) == 0xFF;
  }
  CULE_HD static int starting_action(int i) { return i == 0 ? kFire : -1; }
};

}  // namespace cule::games
