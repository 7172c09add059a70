// Kangaroo: the mode byte may carry bit 7; the score is in hundreds.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Kangaroo : SelectModeGame<Kangaroo> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) {
    return v.ram(0xBA) == mode || v.ram(0xBA) == mode + 0x80;
  }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd2(v, 0xA8, 0xA7) * 100;
    game::take_score(g, kScore, score);
    const int lives_byte = v.ram(0xAD);
    g.terminal = lives_byte == 0xFF;
    g.member[kLives] = (lives_byte & 0x7) + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
