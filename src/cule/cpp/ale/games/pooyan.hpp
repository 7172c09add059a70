// Pooyan: setMode presses SELECT once unconditionally before its loop.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Pooyan : SelectModeGame<Pooyan> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  template <class Env>
  CULE_HD static void before_select(Env& env, int) { env.press_select(2); }
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xBD) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0x8A, 0x89, 0x88);
    game::take_score(g, kScore, score);
    const int lives_byte = v.ram(0x96);
    g.terminal = lives_byte == 0 && v.ram(0x98) == 0x05;
    g.member[kLives] = (lives_byte & 0x7) + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
