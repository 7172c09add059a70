// Robot Tank: the score is squadrons x 12 + tanks, from raw bytes.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Robotank : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = v.ram(0xB6) * 12 + v.ram(0xB5);
    game::take_score(g, kScore, score);
    const int lives_byte = v.ram(0xA8);
    g.terminal = lives_byte == 0 && v.ram(0xB4) == 0xFF;
    g.member[kLives] = (lives_byte & 0xF) + 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
