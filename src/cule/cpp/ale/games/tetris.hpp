// Tetris: only score increases are rewarded; lives() is always 0.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Tetris : GameDefaults {
  enum { kScore };
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd2(v, 0xF1, 0xF2);
    g.reward = score > g.member[kScore] ? score - g.member[kScore] : 0;
    g.member[kScore] = score;
    // ALE's started flag is set just before it is tested, so it never matters.
    g.terminal = (v.ram(0xF3) & 0x80) != 0;
    if (g.terminal) g.member[kScore] = 0;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
};

}  // namespace cule::games
