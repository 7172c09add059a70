// Ms. Pac-Man: mode 0 is the game's mode 1 with variant 1; modes 1-3 use
// variant 0.
#pragma once
#include "game.hpp"

namespace cule::games {

struct MsPacman : SelectModeGame<MsPacman> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 10;
  CULE_HD static bool mode_reached(const GameView& v, int mode) {
    return mode == 0 ? v.ram(0x99) == 1 && v.ram(0xA1) == 1 : v.ram(0x99) == mode && v.ram(0xA1) == 0;
  }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xF8, 0xF9, 0xFA);
    game::take_score(g, kScore, score);
    const int reserve = v.ram(0xFB) & 0xF;
    g.terminal = reserve == 0 && v.ram(0xA7) == 0x53;
    g.member[kLives] = (reserve & 0x7) + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
