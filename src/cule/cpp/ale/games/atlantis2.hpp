// Atlantis II: on the game-over frame the reward is 0 and the score is kept.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Atlantis2 : GameDefaults {
  enum { kScore, kLives };
  // ALE leaves lives unset here; every step() writes it before it is read.
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    g.member[kLives] = v.ram(0xF1);
    g.terminal = g.member[kLives] == 0xFF;
    if (g.terminal) {
      g.reward = 0;
      return;
    }
    const int score = game::bcd3(v, 0xA1, 0xA2, 0xA3);
    game::take_score(g, kScore, score);
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
