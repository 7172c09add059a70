// Demon Attack: 0xABCDEA in the score bytes means 0; setMode masks the
// game-over test for the first frame after it.
#pragma once
#include "game.hpp"

namespace cule::games {

struct DemonAttack : SelectModeGame<DemonAttack> {
  enum { kScore, kLives, kLevelChange };
  static constexpr int kSelectFrames = 1;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xEA) == mode; }
  template <class Env>
  CULE_HD static void after_select(Env& env, int) { env.s.game.member[kLevelChange] = 1; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    int score = game::bcd3(v, 0x85, 0x83, 0x81);
    if (v.ram(0x81) == 0xAB && v.ram(0x83) == 0xCD && v.ram(0x85) == 0xEA) score = 0;
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0xF2) == 0 && v.ram(0xF1) == 0xBD && !g.member[kLevelChange];
    g.member[kLives] = v.ram(0xF2) + 1;
    g.member[kLevelChange] = 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
