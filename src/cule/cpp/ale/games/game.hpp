// The interface of a game's settings: what ALE's RomSettings subclasses
// (src/ale/games/supported/*.cpp) do, as small host+device units: the unit
// of a game follows ALE's settings file of the same name.
//
// A game is a struct of static functions, usually derived from one of the
// bases below, that defines:
//   reset(GameState&)                    the settings' reset(): member values
//   step(GameState&, const GameView&)    after every emulated frame: reward,
//                                        terminal and members from RAM
//   lives(const GameState&)              lives() (default: terminal ? 0 : 1)
//   set_mode(env, mode)                  how setMode reaches a mode (a base
//                                        provides the common "press SELECT
//                                        until RAM shows the mode" loop)
//   starting_action(i)                   the i-th of getStartingActions(), -1 after
//   is_legal(action)                     ALE turns illegal actions into NOOP
//   kPaddleMin / kPaddleMax              modifyEnvironmentSettings' paddle range
#pragma once

#include "ale/ale.hpp"  // action names for starting actions and set_mode
#include "common.hpp"
#include "console/console.hpp"

namespace cule {

constexpr int kGameMembers = 8;
constexpr int kMaxSelectPresses = 1000;

// One game's settings object: its own members (named by each game) and what
// ALE reads from it after every frame.
#define CULE_GAME_STATE_FIELDS(X) \
  X(int32_t, reward)              \
  X(uint8_t, terminal)

struct GameState {
  int32_t member[kGameMembers];
  CULE_GAME_STATE_FIELDS(CULE_DECLARE_FIELD)
  uint8_t pad_[3];
};

// Read access to the machine for a game's step (RomSettings::readRam).
struct GameView {
  const Machine& m;
  // readRam(i): the RIOT RAM byte at $80 + (i & $7F); addresses are written
  // 0x80-based as in the catalogue.
  CULE_HD int ram(int address) const { return m.riot.ram[address & 0x7F]; }
  // A SuperChip cartridge's RAM (klax keeps its state there).
  CULE_HD int cart_ram(int address) const { return m.cart.ram[address & 0x7F]; }
};

namespace game {

// getDecimalScore: BCD digits, without validating them (A-F count 10-15).
CULE_HD int bcd1(const GameView& v, int a) { return 10 * (v.ram(a) >> 4) + (v.ram(a) & 0x0F); }
CULE_HD int bcd2(const GameView& v, int lo, int hi) { return bcd1(v, lo) + 100 * bcd1(v, hi); }
CULE_HD int bcd3(const GameView& v, int lo, int mid, int hi) {
  return bcd1(v, lo) + 100 * bcd1(v, mid) + 10000 * bcd1(v, hi);
}
CULE_HD int s8(int x) { return x >= 128 ? x - 256 : x; }

// The most common reward: the change of the score since the last frame,
// with the score kept in member `slot`.
CULE_HD void take_score(GameState& g, int slot, int score) {
  g.reward = score - g.member[slot];
  g.member[slot] = score;
}

}  // namespace game

// Defaults shared by every game: all actions legal, no starting actions,
// ALE's default paddle range, only mode 0 (setMode does nothing).
struct GameDefaults {
  static constexpr int32_t kPaddleMin = 27450;
  static constexpr int32_t kPaddleMax = 790196;
  CULE_HD static int starting_action(int) { return -1; }
  CULE_HD static bool is_legal(int) { return true; }
  CULE_HD static int lives(const GameState& g) { return g.terminal ? 0 : 1; }
  template <class Env>
  CULE_HD static void set_mode(Env&, int) {}
};

// The common setMode: run the game's `before_select` steps, press SELECT
// (kSelectFrames frames each) until `mode_reached`, run `after_select`, then
// a soft reset. Derived supplies kSelectFrames and mode_reached(view, mode);
// it may shadow before_select / after_select.
template <class Derived>
struct SelectModeGame : GameDefaults {
  template <class Env>
  CULE_HD static void before_select(Env&, int) {}
  template <class Env>
  CULE_HD static void after_select(Env&, int) {}
  template <class Env>
  CULE_HD static void set_mode(Env& env, int mode) {
    Derived::before_select(env, mode);
    for (int presses = 0; !Derived::mode_reached(env.view(), mode); ++presses) {
      if (presses == kMaxSelectPresses) {  // ALE would spin forever here
        env.s.mode_error = 1;
        break;
      }
      env.press_select(Derived::kSelectFrames);
    }
    Derived::after_select(env, mode);
    env.soft_reset();
  }
};

}  // namespace cule
