// Berzerk: setMode first waits 20 full act() frames (RNG draws, counted
// frames) before the game accepts SELECT.
#pragma once
#include "ale/ale.hpp"  // action names
#include "game.hpp"

namespace cule::games {

struct Berzerk : SelectModeGame<Berzerk> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  template <class Env>
  CULE_HD static void before_select(Env& env, int) {
    for (int i = 0; i < 20; ++i) env.act(kNoop, kPlayerBNoop);
  }
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x80) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xDF, 0xDE, 0xDD);
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0xDA) == 0xFF;
    g.member[kLives] = v.ram(0xDA) + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
