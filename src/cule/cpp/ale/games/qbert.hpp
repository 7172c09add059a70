// Q*bert: lives are counted down from 4 whenever the signed lives byte drops
// by one; on the terminal frame the reward is 0 and the score is not taken.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Qbert : GameDefaults {
  enum { kScore, kLastLives, kLives };
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLastLives] = 2;
    g.member[kLives] = 4;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int lives_byte = v.ram(0x88);
    g.terminal = lives_byte == 0xFE || (lives_byte == 0x02 && g.member[kLastLives] == -1);
    const int signed_lives = game::s8(lives_byte);
    if (g.member[kLastLives] - 1 == signed_lives) --g.member[kLives];
    g.member[kLastLives] = signed_lives;
    if (g.terminal) {
      g.reward = 0;
    } else {
      const int score = game::bcd3(v, 0xDB, 0xDA, 0xD9);
      game::take_score(g, kScore, score);
    }
  }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : g.member[kLives]; }
};

}  // namespace cule::games
