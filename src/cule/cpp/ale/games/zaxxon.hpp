// Zaxxon: SELECT is held 10 frames per press; BCD score in hundreds.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Zaxxon : SelectModeGame<Zaxxon> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 10;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x82) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 5;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd2(v, 0xE9, 0xE8) * 100;
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xEA) & 0x7;
    g.terminal = g.member[kLives] == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
