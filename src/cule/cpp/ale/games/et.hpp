// E.T.: lives are a signed char (byte + 1), so 0 exactly when the byte is
// 0xFF; setMode gives up (an error) after 100 SELECT presses.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Et : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return ((v.ram(0xEA) - 1) & 0xFF) == mode; }
  template <class Env>
  CULE_HD static void set_mode(Env& env, int mode) {
    for (int presses = 0; !mode_reached(env.view(), mode) && presses < 100; ++presses) env.press_select(25);
    if (!mode_reached(env.view(), mode)) env.s.mode_error = 1;
    env.soft_reset();
  }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xE1, 0xE0, 0xDF);
    game::take_score(g, kScore, score);
    g.member[kLives] = game::s8((v.ram(0xE5) + 1) & 0xFF);
    g.terminal = g.member[kLives] == 0 && v.ram(0x80) == 8;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
