// Keystone Kapers: the starting action is a console RESET frame.
#pragma once
#include "game.hpp"

namespace cule::games {

struct KeystoneKapers : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static int starting_action(int i) { return i == 0 ? 40 : -1; }  // 40: ALE's RESET
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd2(v, 0x9C, 0x9B);
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0x96);
    g.terminal = g.member[kLives] == 0 && v.ram(0x88) == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
