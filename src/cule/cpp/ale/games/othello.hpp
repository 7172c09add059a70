// Othello: white minus black discs; the game is over after more than 50
// consecutive frames without a player to move.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Othello : SelectModeGame<Othello> {
  enum { kScore, kNoInput };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return ((v.ram(0xDE) - 1) & 0xFF) == mode; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd1(v, 0xCE) - game::bcd1(v, 0xD0);
    game::take_score(g, kScore, score);
    g.member[kNoInput] = v.ram(0xC0) == 0 ? g.member[kNoInput] + 1 : 0;
    g.terminal = g.member[kNoInput] > 50;
  }
};

}  // namespace cule::games
