// H.E.R.O.: plain score and lives bytes.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Hero : SelectModeGame<Hero> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 1;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x80) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xB9, 0xB8, 0xB7);
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xB3);
    g.terminal = g.member[kLives] == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
