// Casino: while input is disabled the reward keeps its last value (and act()
// adds it again); Poker Solitaire (mode 3) has its own end condition.
#pragma once
#include "ale/ale.hpp"  // action names
#include "game.hpp"

namespace cule::games {

struct Casino : SelectModeGame<Casino> {
  enum { kScore };
  static constexpr int kSelectFrames = 2;
  CULE_HD static bool mode_reached(const GameView& v, int mode) { return v.ram(0xD4) == mode; }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int score = game::bcd2(v, 0x95, 0x8C);
    if (v.ram(0xD4) == 3) {
      g.reward = score - g.member[kScore];
      g.terminal = score > 0 && v.ram(0x9E) == 0xAA;
    } else {
      // Skipped while disabled: the game refunds 1000 chips as it ends.
      const bool disabled = (v.ram(0xD3) & 0x80) != 0;
      if (!disabled) g.reward = score - g.member[kScore];
      g.terminal = score == 0 || (game::bcd1(v, 0x9E) > 0 && disabled);
    }
    g.member[kScore] = score;
  }
  // 60 NOOPs, then FIRE twice.
  CULE_HD static int starting_action(int i) { return i < 60 ? kNoop : i < 62 ? kFire : -1; }
};

}  // namespace cule::games
