// Enduro: the score counts cars passed: 200 on day 1, 300 on each later day,
// from the cars-left counter of the current day.
#pragma once
#include "ale/ale.hpp"  // action names
#include "game.hpp"

namespace cule::games {

struct Enduro : GameDefaults {
  enum { kScore };
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int day = v.ram(0xAD);
    int score = 0;
    if (day != 0) {
      const int cars_left = game::bcd2(v, 0xAB, 0xAC);
      if (day == 1) score = 200 - cars_left;
      else score = 200 + (day - 2) * 300 + 300 - cars_left;
    }
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0xAF) == 0xFF;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
  CULE_HD static int starting_action(int i) { return i == 0 ? kFire : -1; }
};

}  // namespace cule::games
