// King Kong: the mode byte holds 2 * mode.
#pragma once
#include "game.hpp"

namespace cule::games {

struct KingKong : SelectModeGame<KingKong> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xEC) == 2 * mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd2(v, 0x83, 0x82);
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xEE);
    g.terminal = g.member[kLives] == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
