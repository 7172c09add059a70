// Lost Luggage: FIRE actions are illegal (the starting FIRE bypasses the
// check); the mode byte 1 + 3 * mode is also the score's high byte.
#pragma once
#include "game.hpp"

namespace cule::games {

struct LostLuggage : SelectModeGame<LostLuggage> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x94) == 1 + 3 * mode; }
  CULE_HD static int starting_action(int i) { return i == 0 ? 1 : -1; }
  CULE_HD static bool is_legal(int a) { return a != 1 && (a < 10 || a > 17); }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0x96, 0x95, 0x94);
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xCA);
    g.terminal = g.member[kLives] == 0 && v.ram(0xC8) == 0x0A && v.ram(0xA5) == 0 && v.ram(0xA9) == 0;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
