// Kaboom!: paddles; also ends at the maximum score 999999.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Kaboom : GameDefaults {
  enum { kScore };
  CULE_HD static int starting_action(int i) { return i == 0 ? 1 : -1; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xA5, 0xA4, 0xA3);
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0xA1) == 0 || score == 999999;
  }
};

}  // namespace cule::games
