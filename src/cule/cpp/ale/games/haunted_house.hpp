// Haunted House: -1 whenever the matches counter changes, +100 for escaping
// with the urn.
#pragma once
#include "game.hpp"

namespace cule::games {

struct HauntedHouse : SelectModeGame<HauntedHouse> {
  enum { kMatches, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xCC) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 9;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    g.reward = 0;
    const int matches = game::bcd1(v, 0x82);
    if (matches != g.member[kMatches]) {
      g.reward -= 1;
      g.member[kMatches] = matches;
    }
    g.member[kLives] = v.ram(0x96);
    const bool escaped = v.ram(0x99) == 0x44;
    if (escaped) g.reward += 100;
    g.terminal = g.member[kLives] == 0 || escaped;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
