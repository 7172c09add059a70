// Pitfall!: the score starts at 2000 and can go down; lives from the high
// nibble of $80.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Pitfall : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kScore] = 2000;  // the game's starting score: no reward for it
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xD7, 0xD6, 0xD5);
    game::take_score(g, kScore, score);
    const int lives_nibble = v.ram(0x80) >> 4;
    g.terminal = lives_nibble == 0 && v.ram(0x9E) != 0;
    g.member[kLives] = lives_nibble == 0xA ? 3 : lives_nibble == 0x8 ? 2 : 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
  CULE_HD static int starting_action(int i) { return i == 0 ? kUp : -1; }
};

}  // namespace cule::games
