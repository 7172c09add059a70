// Human Cannonball: the select loop also waits for one player; first to 7
// hits or 7 misses ends the game.
#pragma once
#include "game.hpp"

namespace cule::games {

struct HumanCannonball : SelectModeGame<HumanCannonball> {
  enum { kScore, kMisses };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) {
    return ((v.ram(0xB6) - 1) & 0xFF) == mode && v.ram(0xB7) == 1;
  }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd1(v, 0xB6);
    game::take_score(g, kScore, score);
    g.member[kMisses] = game::bcd1(v, 0xB7);
    g.terminal = score == 7 || g.member[kMisses] == 7;
  }
};

}  // namespace cule::games
