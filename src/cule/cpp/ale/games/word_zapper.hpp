// Word Zapper: step() only updates while $CF is non-zero, so the last reward
// repeats on every frame in between; 486 NOOPs then FIRE start the game.
#pragma once
#include "game.hpp"

namespace cule::games {

struct WordZapper : SelectModeGame<WordZapper> {
  enum { kScore };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xDB) == mode; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    if (game::bcd1(v, 0xCF) <= 0) return;
    const int score = 2 - game::s8(v.ram(0xDC));
    game::take_score(g, kScore, score);
    g.terminal = score == 3 || game::bcd1(v, 0xDE) == 0;
  }
  CULE_HD static int starting_action(int i) {
    return i < 486 ? kNoop : i == 486 ? kFire : i < 489 ? kNoop : -1;
  }
};

}  // namespace cule::games
