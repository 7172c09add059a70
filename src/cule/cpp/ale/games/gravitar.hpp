// Gravitar: 16 FIRE frames start the game; lives read 6 on the title screen.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Gravitar : SelectModeGame<Gravitar> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 10;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x80) == mode; }
  // ALE sets the mode's lives here; the soft reset's step() overwrites them.
  template <class Env>
  CULE_HD static void after_select(Env& env, int mode) {
    env.s.game.member[kLives] = mode == 1 ? 15 : mode == 3 ? 100 : mode == 4 ? 25 : 6;
  }
  CULE_HD static int starting_action(int i) { return i < 16 ? 1 : -1; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 6;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0x89, 0x88, 0x87);
    game::take_score(g, kScore, score);
    const int screen = v.ram(0x81);
    g.terminal = screen == 0x01;
    g.member[kLives] = screen == 0x00 ? 6 : v.ram(0x84) + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
