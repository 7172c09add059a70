// River Raid: score digits are glyph offsets (8 per digit); the episode ends
// when the lives byte goes from 0x59 to 0x58.
#pragma once
#include "game.hpp"

namespace cule::games {

struct Riverraid : GameDefaults {
  enum { kScore, kLivesByte };
  // A glyph offset that is not a digit's counts as 0.
  CULE_HD static int digit(int glyph) { return (glyph & 7) == 0 && glyph <= 72 ? glyph >> 3 : 0; }
  CULE_HD static void reset(GameState& g) {
    g = GameState{};
    g.member[kLivesByte] = 0x58;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    int score = 0;
    for (int a = 0xCD; a <= 0xD7; a += 2) score = 10 * score + digit(v.ram(a));
    game::take_score(g, kScore, score);
    const int lives_byte = v.ram(0xC0);
    g.terminal = lives_byte == 0x58 && g.member[kLivesByte] == 0x59;
    g.member[kLivesByte] = lives_byte;
  }
  CULE_HD static int lives(const GameState& g) {
    const int b = g.member[kLivesByte];
    return g.terminal ? 0 : b == 0x58 ? 4 : b == 0x59 ? 1 : b / 8 + 1;
  }
};

}  // namespace cule::games
