// A ROM that is none of ALE's games (homebrew, a hack, a test cartridge):
// the console alone. No reward, no end, one life, every action legal, only
// mode 0; ALE itself refuses such ROMs, cule runs them (roms.py warns).
#pragma once
#include "game.hpp"

namespace cule::games {

struct Bare : GameDefaults {
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView&) {
    g.reward = 0;
    g.terminal = 0;
  }
};

}  // namespace cule::games
