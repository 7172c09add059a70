// Bowling: over after the tenth frame (the BCD frame counter passes 0x10).
#pragma once
#include "game.hpp"

namespace cule::games {

struct Bowling : SelectModeGame<Bowling> {
  enum { kScore };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x82) == mode; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd2(v, 0xA1, 0xA6);
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0xA4) > 0x10;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
};

}  // namespace cule::games
