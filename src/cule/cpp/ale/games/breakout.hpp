// Breakout: paddles; the episode ends when the lives byte, having shown 5,
// reaches 0.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Breakout : SelectModeGame<Breakout> {
  enum { kScore, kLives, kStarted };
  static constexpr int kSelectFrames = 1;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xB2) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 5;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = (v.ram(0xCD) & 0xF) + 10 * (v.ram(0xCD) >> 4) + 100 * (v.ram(0xCC) & 0xF);
    game::take_score(g, kScore, score);
    const int lives_byte = v.ram(0xB9);
    if (!g.member[kStarted] && lives_byte == 5) g.member[kStarted] = 1;
    g.terminal = g.member[kStarted] && lives_byte == 0;
    g.member[kLives] = lives_byte;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
