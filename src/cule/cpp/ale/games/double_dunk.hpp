// Double Dunk: a mode is four on/off options set by driving the game's menu
// with act() (RNG draws, counted frames); the score is player minus opponent.
#pragma once
#include "ale/ale.hpp"  // action names
#include "game.hpp"

namespace cule::games {

struct DoubleDunk : GameDefaults {
  enum { kScore };
  // Each menu move is an act() pair; the loops are bounded so a stuck menu
  // flags mode_error instead of hanging (ALE would spin forever).
  template <class Env>
  CULE_HD static bool move(Env& env, int action, int& budget) {
    if (budget-- <= 0) {
      env.s.mode_error = 1;
      return false;
    }
    env.act(action, kPlayerBNoop);
    env.act(kNoop, kPlayerBNoop);
    return true;
  }
  template <class Env>
  CULE_HD static void go_down(Env& env, int& budget) {
    const int previous = env.view().ram(0xB0);
    do {
      if (!move(env, kDown, budget)) return;
    } while (env.view().ram(0xB0) == previous);
  }
  template <class Env>
  CULE_HD static void set_option(Env& env, int bit, bool on, int& budget) {
    while (((env.view().ram(0x80) & bit) == bit) != on)
      if (!move(env, on ? kRight : kLeft, budget)) return;
  }
  template <class Env>
  CULE_HD static void set_mode(Env& env, int mode) {
    int budget = kMaxSelectPresses;
    env.press_select(1);
    go_down(env, budget);  // the first two entries are not options
    go_down(env, budget);
    set_option(env, 0x08, mode & 1, budget);
    go_down(env, budget);
    set_option(env, 0x10, mode & 2, budget);
    go_down(env, budget);
    set_option(env, 0x04, mode & 4, budget);
    go_down(env, budget);
    set_option(env, 0x20, mode & 8, budget);
    env.soft_reset();
    env.act(kUpFire, kPlayerBNoop);
    env.act(kNoop, kPlayerBNoop);
  }
  CULE_HD static void reset(GameState& g) { g = GameState{}; }
  CULE_HD static void step(GameState& g, const GameView& v) {
    const int mine = game::bcd1(v, 0xF6), theirs = game::bcd1(v, 0xF7);
    const int score = mine - theirs;
    game::take_score(g, kScore, score);
    g.terminal = (mine >= 24 || theirs >= 24) && v.ram(0xFE) == 0xE7;
  }
  CULE_HD static int lives(const GameState&) { return 0; }
  CULE_HD static int starting_action(int i) { return i == 0 ? kUpFire : -1; }
};

}  // namespace cule::games
