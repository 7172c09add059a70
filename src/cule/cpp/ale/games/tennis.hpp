// Tennis: rewarded on the point difference, or failing that the game
// difference; the set ends at 6 games with a 2-game lead, or at 7.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Tennis : SelectModeGame<Tennis> {
  enum { kPrevDeltaPoints, kPrevDeltaScore };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0x80) == mode; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int my_score = v.ram(0xC5), their_score = v.ram(0xC6);
    const int my_points = v.ram(0xC7), their_points = v.ram(0xC8);
    const int delta_score = my_score - their_score, delta_points = my_points - their_points;
    if (g.member[kPrevDeltaPoints] != delta_points) {
      g.reward = delta_points - g.member[kPrevDeltaPoints];
    } else if (g.member[kPrevDeltaScore] != delta_score) {
      g.reward = delta_score - g.member[kPrevDeltaScore];
    } else {
      g.reward = 0;
    }
    g.member[kPrevDeltaPoints] = delta_points;
    g.member[kPrevDeltaScore] = delta_score;
    g.terminal = (my_points >= 6 && delta_points >= 2) || (their_points >= 6 && -delta_points >= 2) ||
                 my_points == 7 || their_points == 7;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
};

}  // namespace cule::games
