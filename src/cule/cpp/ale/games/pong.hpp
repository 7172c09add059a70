// Pong (Video Olympics): paddles; the score is player minus computer.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Pong : SelectModeGame<Pong> {
  enum { kScore };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x96) == mode; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int cpu = v.ram(0x8D), player = v.ram(0x8E);
    const int score = player - cpu;
    game::take_score(g, kScore, score);
    g.terminal = cpu == 21 || player == 21;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
};

}  // namespace cule::games
