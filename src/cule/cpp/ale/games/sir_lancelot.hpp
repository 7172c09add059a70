// Sir Lancelot: the starting actions press console RESET, then LEFT.
#pragma once
#include "game.hpp"

namespace cule::games {

struct SirLancelot : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xA0, 0x9F, 0x9E);
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xA9);
    g.terminal = g.member[kLives] == 0 && v.ram(0xA7) == 0xA0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
  CULE_HD static int starting_action(int i) {
    switch (i) {
      case 0: return kReset;
      case 1: return kLeft;
      default: return -1;
    }
  }
};

}  // namespace cule::games
