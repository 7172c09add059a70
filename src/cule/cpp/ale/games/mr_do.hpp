// Mr. Do!: the score bytes are low-then-high and count tens.
#pragma once
#include "game.hpp"

namespace cule::games {

struct MrDo : SelectModeGame<MrDo> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 5;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x80) == mode; }
  CULE_HD static int starting_action(int i) { return i == 0 ? 1 : -1; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd2(v, 0x82, 0x83) * 10;
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xDB);
    g.terminal = v.ram(0xDA) == 0x40;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
