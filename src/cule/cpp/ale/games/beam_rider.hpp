// Beam Rider: a lost life counts only once the game confirms it (0x8C == 1),
// so lives() lags the lives byte.
#pragma once
#include "ale/ale.hpp"  // action names
#include "game.hpp"

namespace cule::games {

struct BeamRider : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0x89, 0x8A, 0x8B);
    game::take_score(g, kScore, score);
    g.terminal = v.ram(0x85) == 0xFF;
    const int shown = v.ram(0x85) + 1;
    if (shown != g.member[kLives] - 1 || v.ram(0x8C) == 0x01) g.member[kLives] = shown;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
  CULE_HD static int starting_action(int i) { return i == 0 ? kRight : -1; }
};

}  // namespace cule::games
