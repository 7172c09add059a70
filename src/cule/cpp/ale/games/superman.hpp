// Superman: the only reward is the time left when the episode ends.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Superman : GameDefaults {
  enum { kTimeInSeconds };
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    g.member[kTimeInSeconds] = game::bcd1(v, 0xE3) * 60 + game::bcd1(v, 0xE2);
    const int room = v.ram(0x80) + (v.ram(0x81) << 8);
    g.terminal = (v.ram(0x9F) & 0x40) != 0 && room == 0xF2AC;
    g.reward = g.terminal ? 99 * 60 + 59 - g.member[kTimeInSeconds] : 0;
  }
};

}  // namespace cule::games
