// Battle Zone: score digits use nibble 0xA for a blank (read as 0), in
// thousands.
#pragma once
#include "game.hpp"

namespace cule::games {

struct BattleZone : SelectModeGame<BattleZone> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xA1) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 5;
  }
  CULE_HD static int digit(int nibble) { return nibble == 10 ? 0 : nibble; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = 1000 * (digit(v.ram(0x9D) >> 4) + 10 * digit(v.ram(0x9E) & 15) + 100 * digit(v.ram(0x9E) >> 4));
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xBA) & 0xF;
    g.terminal = g.member[kLives] == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
