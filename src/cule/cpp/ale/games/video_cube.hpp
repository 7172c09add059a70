// Video Cube: mode = cube * 100 + variant; setMode selects the variant, then
// acts RIGHT (a full act(), sticky draws included) until the cube is shown.
// Reward: completed faces gained, -1 when the idle timer wraps.
#pragma once
#include "game.hpp"

namespace cule::games {

struct VideoCube : GameDefaults {
  // The two latest timer bytes survive reset(): only step() writes them.
  enum { kCube, kFaces, kTimer, kLastTimer };
  CULE_HD static void reset(GameState& g) {
    g.member[kCube] = 1;
    g.member[kFaces] = 0;
    g.reward = 0;
    g.terminal = 0;
  }
  CULE_HD static void step(GameState& g, const GameView& v) {
    int faces = 0;
    for (int f = 0; f < 6; ++f) {
      const int base = 0xA0 + 9 * f;
      bool same = true;
      for (int i = 1; i < 9 && same; ++i) same = v.ram(base + i) == v.ram(base);
      faces += same;
    }
    g.member[kLastTimer] = g.member[kTimer];
    g.member[kTimer] = v.ram(0xDB);
    const bool timed_out = g.member[kTimer] == 0 && g.member[kLastTimer] == 255;
    g.reward = timed_out ? -1 : faces - g.member[kFaces];
    g.member[kFaces] = faces;
    g.terminal = timed_out || faces == 6;
  }
  template <class Env>
  CULE_HD static void set_mode(Env& env, int mode) {
    if (mode >= 100) env.s.game.member[kCube] = mode / 100;
    const int variant = mode % 100;
    const int wanted = variant == 0 ? 0 : variant == 1 ? 2 : 8;  // game variations 1, 3, 9
    for (int n = 0; (env.view().ram(0xFB) & 0x1F) != wanted; ++n) {
      if (n == kMaxSelectPresses) {  // ALE would spin forever here
        env.s.mode_error = 1;
        return;
      }
      env.press_select(2);
    }
    env.soft_reset();
    for (int n = 0; game::bcd1(env.view(), 0x9F) != env.s.game.member[kCube]; ++n) {
      if (n == kMaxSelectPresses) {
        env.s.mode_error = 1;
        return;
      }
      env.act(kRight, kPlayerBNoop);
    }
  }
  CULE_HD static int starting_action(int i) { return i < 61 ? kNoop : i == 61 ? kFire : i < 64 ? kNoop : -1; }
};

}  // namespace cule::games
