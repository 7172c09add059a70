// Pitfall II (DPC cart): the score starts at 4000; only the maximum score
// (199000) ends the episode.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Pitfall2 : GameDefaults {
  enum { kScore };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kScore] = 4000;  // the game's starting score: no reward for it
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd3(v, 0xC9, 0xC8, 0xC7);
    game::take_score(g, kScore, score);
    g.terminal = score == 199000;
  }
  CULE_HD static int starting_action(int i) { return i == 0 ? kUp : -1; }
};

}  // namespace cule::games
