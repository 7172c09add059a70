// Tutankham: BCD score; lives in the low two bits of $9E.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Tutankham : SelectModeGame<Tutankham> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xAB) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd2(v, 0x9C, 0x9A);
    game::take_score(g, kScore, score);
    const int lives_byte = v.ram(0x9E);
    g.terminal = lives_byte == 0 && v.ram(0x81) != 0x84;
    g.member[kLives] = lives_byte & 0x3;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
