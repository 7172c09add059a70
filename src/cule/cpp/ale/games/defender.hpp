// Defender: six score digits in the low nibbles of 0x9C..0xA1, 0xA blank.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Defender : SelectModeGame<Defender> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x9B) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    int score = 0;
    for (int i = 5; i >= 0; --i) {
      const int d = v.ram(0x9C + i) & 0xF;
      score = 10 * score + (d == 0xA ? 0 : d);
    }
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xC2);
    g.terminal = g.member[kLives] == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
