// Asterix: the game ends when the death counter fires on the last life.
#pragma once
#include "ale/ale.hpp"  // action names
#include "game.hpp"

namespace cule::games {

struct Asterix : GameDefaults {
  enum { kScore, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLives] = 3;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xE0, 0xDF, 0xDE);
    game::take_score(g, kScore, score);
    g.member[kLives] = v.ram(0xD3) & 0xF;
    g.terminal = v.ram(0xC7) == 0x01 && g.member[kLives] == 1;
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
  CULE_HD static int starting_action(int i) { return i == 0 ? kFire : -1; }
};

}  // namespace cule::games
