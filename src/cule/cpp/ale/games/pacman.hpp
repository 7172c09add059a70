// Pac-Man: the select loop also waits for one player; the mode byte is
// mode + 1.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Pacman : SelectModeGame<Pacman> {
  enum { kScore, kLives };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) {
    return ((v.ram(0xCC) - 1) & 0xFF) == mode && v.ram(0xE6) == 0;
  }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xCC, 0xCE, 0xD0);
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0x98) + 1;
    g.terminal = g.member[kLives] == 1 && v.ram(0xE4) == 0x3F;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
