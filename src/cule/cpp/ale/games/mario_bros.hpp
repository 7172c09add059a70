// Mario Bros.: ten NOOP then seven FIRE frames start the game; the score is
// in hundreds.
#pragma once
#include "game.hpp"

namespace cule::games {

struct MarioBros : SelectModeGame<MarioBros> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 5;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x80) == mode; }
  CULE_HD static int starting_action(int i) { return i < 10 ? 0 : i < 17 ? 1 : -1; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd2(v, 0x8A, 0x89) * 100;
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0x87);
    g.terminal = g.member[kLives] == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
