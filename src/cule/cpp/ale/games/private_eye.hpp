// Private Eye: the score starts at 1000 and can go down; lives() is always 0.
#pragma once
#include "game.hpp"

namespace cule::games {

struct PrivateEye : SelectModeGame<PrivateEye> {
  enum { kScore };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x80) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kScore] = 1000;  // the game's starting score: no reward for it
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xCA, 0xC9, 0xC8);
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0xC2) != 0x00 && v.ram(0xC2) != 0x01;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
  CULE_HD static int starting_action(int i) { return i == 0 ? kUp : -1; }
};

}  // namespace cule::games
