// Video Pinball: lives are 4 + extra-ball bit - balls used.
#pragma once
#include "game.hpp"

namespace cule::games {

struct VideoPinball : SelectModeGame<VideoPinball> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xC1) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xB0, 0xB2, 0xB4);
    game::take_score(g, kScore, score);
    g.terminal = (v.ram(0xAF) & 0x1) != 0;
    g.member[kLives] = 4 + (v.ram(0xA8) & 0x1) - (v.ram(0x99) & 0x7);
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
