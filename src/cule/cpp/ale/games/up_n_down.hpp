// Up'n Down: BCD score; FIRE starts the game.
#pragma once
#include "game.hpp"

namespace cule::games {

struct UpNDown : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 5;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0x82, 0x81, 0x80);
    game::take_score(g, kScore, score);
    const int lives_bits = v.ram(0x86) & 0xF;
    g.terminal = v.ram(0x94) > 0x40 && lives_bits == 0;
    g.member[kLives] = lives_bits + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
  CULE_HD static int starting_action(int i) { return i == 0 ? kFire : -1; }
};

}  // namespace cule::games
