// Miniature Golf: the reward (par - strokes) comes when the hole number
// changes; the game ends, and stays ended, when it changes to 0.
#pragma once
#include "game.hpp"

namespace cule::games {

struct MiniatureGolf : GameDefaults {
  enum { kHole, kPar, kHits, kLeftDisplay, kHitsAtHoleStart };
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    g.reward = 0;
    const int left = game::bcd1(v, 0x87), right = game::bcd1(v, 0x88), hole = game::bcd1(v, 0xAF);
    int* m = g.member;
    if (hole != m[kHole]) {
      const int strokes = m[kLeftDisplay] + m[kHits] - m[kHitsAtHoleStart];
      if (strokes > 0) g.reward = m[kPar] - strokes;
      if (hole == 0) g.terminal = 1;
      m[kHole] = hole;
      m[kHits] = 0;
      m[kHitsAtHoleStart] = m[kLeftDisplay];
    }
    if (right != 0) {
      m[kPar] = right;  // between holes the right display shows the par
    } else {
      if (left < m[kLeftDisplay]) m[kHits] += m[kLeftDisplay];  // stroke counter wrapped
      m[kLeftDisplay] = left;
    }
  }
};

}  // namespace cule::games
