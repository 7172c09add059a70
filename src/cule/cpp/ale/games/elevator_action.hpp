// Elevator Action: 16 FIREs start the game; no lives left ends it once the
// game is running (0x81 != 0).
#pragma once
#include "ale/ale.hpp"  // action names
#include "game.hpp"

namespace cule::games {

struct ElevatorAction : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0x89, 0x88, 0x87);
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0x83);
    g.terminal = g.member[kLives] == 0 && v.ram(0x81) != 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
  CULE_HD static int starting_action(int i) { return i < 16 ? kFire : -1; }
};

}  // namespace cule::games
