// Chopper Command: no lives on the title screen, so game over counts only
// after the chopper has once faced right (the game has started).
#pragma once
#include "game.hpp"

namespace cule::games {

struct ChopperCommand : SelectModeGame<ChopperCommand> {
  enum { kScore, kLives, kStarted };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xE0) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = 100 * game::bcd2(v, 0xEE, 0xEC);
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xE4) & 0xF;
    g.member[kStarted] |= v.ram(0xC2) & 1;
    g.terminal = g.member[kStarted] && g.member[kLives] == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.member[kLives]; }
};

}  // namespace cule::games
