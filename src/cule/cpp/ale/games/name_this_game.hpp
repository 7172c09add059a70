// Name This Game: modes are 8, 24 and 40 as the game stores them.
#pragma once
#include "game.hpp"

namespace cule::games {

struct NameThisGame : SelectModeGame<NameThisGame> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xDE) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xC6, 0xC5, 0xC4);
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xC7) & 0x7;
    g.terminal = g.member[kLives] == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
