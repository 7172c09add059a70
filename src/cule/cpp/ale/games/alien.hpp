// Alien: score digits are stored as glyph offsets (value * 8, 0x80 blank);
// lives() is not zeroed at game over.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Alien : SelectModeGame<Alien> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 1;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x81) == mode; }
  template <class Env>
  CULE_HD static void after_select(Env& env, int) {
    env.s.game.member[kLives] = env.view().ram(0xC0) & 15;
  }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static int digit(const GameView& v, int a) { return v.ram(a) == 0x80 ? 0 : v.ram(a) >> 3; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = 10 * (digit(v, 0x8B) + 10 * digit(v, 0x89) + 100 * digit(v, 0x87) +
                            1000 * digit(v, 0x85) + 10000 * digit(v, 0x83));
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xC0) & 15;
    g.terminal = g.member[kLives] == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.member[kLives]; }
};

}  // namespace cule::games
