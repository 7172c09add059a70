// Laser Gates: the starting action is a console RESET frame; no lives.
#pragma once
#include "game.hpp"

namespace cule::games {

struct LaserGates : GameDefaults {
  enum { kScore };
  CULE_HD static int starting_action(int i) { return i == 0 ? 40 : -1; }  // 40: ALE's RESET
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0x82, 0x81, 0x80);
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0x83) == 0;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
};

}  // namespace cule::games
