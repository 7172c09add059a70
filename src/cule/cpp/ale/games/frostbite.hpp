// Frostbite: game over needs both no reserve lives and the end-of-game flag.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Frostbite : SelectModeGame<Frostbite> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 1;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x80) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xCA, 0xC9, 0xC8);
    game::take_score(g, kScore, score);
    const int reserve = v.ram(0xCC) & 0xF;
    g.terminal = reserve == 0 && (v.ram(0xF1) & 0x80) != 0;
    g.member[kLives] = reserve + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
