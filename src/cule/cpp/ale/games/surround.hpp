// Surround: the score is player minus computer; modes are stored plus one.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Surround : SelectModeGame<Surround> {
  enum { kScore };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xF9) == mode + 1; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int theirs = game::bcd1(v, 0xF6), mine = game::bcd1(v, 0xF7);
    const int score = mine - theirs;
    game::take_score(g, kScore, score);
    g.terminal = theirs == 10 || mine == 10;
  }
};

}  // namespace cule::games
