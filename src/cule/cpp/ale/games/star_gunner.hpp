// Star Gunner: one score digit per byte (0xA reads as 0); lives() stays 5
// until the lives byte has shown 5.
#pragma once
#include "game.hpp"

namespace cule::games {

struct StarGunner : SelectModeGame<StarGunner> {
  enum { kScore, kLives, kStarted };
  static constexpr int kSelectFrames = 15;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xF4) == mode; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 5;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    int score = 0;
    for (int a = 0x86; a >= 0x83; --a) {
      const int d = v.ram(a) & 0xF;
      score = 10 * score + (d == 10 ? 0 : d);
    }
    score *= 100;
    game::take_score(g, kScore, score);
    const int lives_byte = v.ram(0x87);
    g.terminal = lives_byte == 0;
    if (lives_byte == 0x05) g.member[kStarted] = 1;
    g.member[kLives] = g.member[kStarted] ? (lives_byte & 0xF) : 5;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
