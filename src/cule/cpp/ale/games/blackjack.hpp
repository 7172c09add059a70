// Blackjack: chips as score; a bust shows the marker 0x0B/0xBB; wider paddle
// range.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Blackjack : GameDefaults {
  enum { kScore };
  static constexpr int32_t kPaddleMax = 795000;
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const bool bust = v.ram(0x86) == 0x0B && v.ram(0x89) == 0xBB;
    const int score = bust ? 0 : game::bcd2(v, 0x89, 0x86);
    game::take_score(g, kScore, score);
    g.terminal = bust || score >= 1000;
  }
};

}  // namespace cule::games
