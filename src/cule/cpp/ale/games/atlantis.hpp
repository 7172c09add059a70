// Atlantis: on the game-over frame the reward is 0 and the score is kept.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Atlantis : SelectModeGame<Atlantis> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x8D) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 6;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    g.member[kLives] = v.ram(0xF1);
    g.terminal = g.member[kLives] == 0xFF;
    if (g.terminal) {
      g.reward = 0;
      return;
    }
    const int score = 100 * game::bcd3(v, 0xA2, 0xA3, 0xA1);
    game::take_score(g, kScore, score);
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
