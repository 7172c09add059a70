// Donkey Kong: over with no lives left on the death animation's last frame.
#pragma once
#include "game.hpp"

namespace cule::games {

struct DonkeyKong : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 2;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = 100 * game::bcd2(v, 0x88, 0x87);
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xA3);
    g.terminal = g.member[kLives] == 0 && v.ram(0x8F) == 0x03 && v.ram(0x8B) == 0x1F;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
