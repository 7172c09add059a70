// Turmoil: the score adds a raw byte to a BCD pair, in tens; FIRE starts.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Turmoil : SelectModeGame<Turmoil> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xEA) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = (game::bcd2(v, 0x89, 0x8A) + v.ram(0xD3)) * 10;
    game::take_score(g, kScore, score);
    const int lives_byte = v.ram(0xB9);
    g.terminal = lives_byte == 0 && v.ram(0xC5) == 0x01;
    g.member[kLives] = lives_byte;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
  CULE_HD static int starting_action(int i) { return i == 0 ? kFire : -1; }
};

}  // namespace cule::games
