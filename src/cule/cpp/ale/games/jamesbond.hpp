// James Bond 007: the mode byte may carry 0x48 on top of the mode.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Jamesbond : SelectModeGame<Jamesbond> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 20;
  CULE_HD static bool mode_reached(const GameView& v, int mode) {
    return v.ram(0x8C) == mode || v.ram(0x8C) == mode + 0x48;
  }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 6;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xDC, 0xDD, 0xDE);
    game::take_score(g, kScore, score);
    const int reserve = v.ram(0x86) & 0xF;
    g.terminal = reserve == 0 && v.ram(0x8C) == 0x68;
    g.member[kLives] = reserve + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
