// ALE's input layer: how an action becomes the events Stella's controllers
// read (environment/ale_state.cpp), and how the controllers put those events
// on the chips' pins (emucore/Joystick.cxx, Paddles.cxx, Switches.cxx).
#pragma once

#include "common.hpp"
#include "console/console.hpp"

namespace cule {

// ALE's action numbers: player A 0-17, player B 18-35, RESET 40.
enum AleAction : uint8_t {
  kNoop = 0, kFire, kUp, kRight, kLeft, kDown, kUpRight, kUpLeft, kDownRight, kDownLeft,
  kUpFire, kRightFire, kLeftFire, kDownFire, kUpRightFire, kUpLeftFire, kDownRightFire, kDownLeftFire,
  kPlayerBNoop = 18, kReset = 40, kSelect = 46
};

constexpr int32_t kPaddleDelta = 23000;

// An action as the step path carries it (one int32 per environment, on
// every backend): the ALE action in the low byte and, above it, player A's
// paddle step for continuous actions. ALE moves a paddle by
// (int)(PADDLE_DELTA * |strength|) a frame (ALEState::applyActionPaddles);
// the step is that value plus 1, and 0 there means full strength
// (PADDLE_DELTA), so a plain action id is a full-strength action. Steps
// above kMaxPaddleStep move a paddle exactly as kMaxPaddleStep does (past
// either end of every paddle range, where ALE clamps) and are stored as it.
constexpr int kActionIdBits = 8;
constexpr int32_t kMaxPaddleStep = 1 << 22;
CULE_HD int action_id(int32_t word) { return word & ((1 << kActionIdBits) - 1); }
CULE_HD int32_t paddle_step(int32_t word) {
  const int32_t code = word >> kActionIdBits;
  return code <= 0 ? kPaddleDelta : code - 1 < kMaxPaddleStep ? code - 1 : kMaxPaddleStep;
}

// How the ROM's controllers are wired (Stella properties of the ROM).
struct ControllerSetup {
  uint8_t left_paddles;   // Controller.Left == PADDLES
  uint8_t right_paddles;  // Controller.Right == PADDLES
  uint8_t swap_ports;     // Console.SwapPorts
  uint8_t swap_paddles;   // Controller.SwapPaddles
  int32_t paddle_min, paddle_max;
};

// The subset of Stella's Event table ALE drives.
struct Events {
  int32_t paddle_resistance[4];  // PaddleZero..Three; ALE only sets Zero and One
  uint8_t joystick[2];           // JoystickZero/One: bit 0 up, 1 down, 2 left, 3 right, 4 fire
  uint8_t paddle_fire[4];
  uint8_t console_reset, console_select;
  uint8_t difficulty_events;     // as Controls::difficulty_events
};

// ALE's own per-environment state.
struct AleState {
  int32_t paddle[2];  // m_left_paddle, m_right_paddle: resistance of PaddleZero/One
  uint16_t mode;      // applied at the next reset_game (video_cube's modes reach 5002)
  uint8_t difficulty;
};

namespace ale {

enum : uint8_t { kUpBit = 1, kDownBit = 2, kLeftBit = 4, kRightBit = 8, kFireBit = 16 };

// The joystick bits of one player's action (0-17).
CULE_HD uint8_t joystick_bits(int a) {
  // NOOP FIRE UP RIGHT LEFT DOWN UR UL DR DL UF RF LF DF URF ULF DRF DLF
  const uint8_t table[18] = {0, kFireBit, kUpBit, kRightBit, kLeftBit, kDownBit,
                             kUpBit | kRightBit, kUpBit | kLeftBit, kDownBit | kRightBit, kDownBit | kLeftBit,
                             kUpBit | kFireBit, kRightBit | kFireBit, kLeftBit | kFireBit, kDownBit | kFireBit,
                             kUpBit | kRightBit | kFireBit, kUpBit | kLeftBit | kFireBit,
                             kDownBit | kRightBit | kFireBit, kDownBit | kLeftBit | kFireBit};
  return (a >= 0 && a < 18) ? table[a] : 0;
}

// resetKeys: releases every key and rewrites the difficulty switches.
CULE_HD void reset_keys(Events& e, uint8_t difficulty) {
  e.console_reset = e.console_select = 0;
  e.joystick[0] = e.joystick[1] = 0;
  e.paddle_fire[0] = e.paddle_fire[1] = 0;
  e.difficulty_events = (uint8_t)(((difficulty & 1) ? 0x1 : 0x2) | ((difficulty & 2) ? 0x4 : 0x8));
}

// applyActionJoysticks (once per emulate() call).
CULE_HD void apply_joysticks(Events& e, uint8_t difficulty, int action_a, int action_b) {
  reset_keys(e, difficulty);
  if (action_a == kReset || action_b == kReset) e.console_reset = 1;
  e.joystick[0] = joystick_bits(action_a);
  e.joystick[1] = joystick_bits(action_b - kPlayerBNoop);
}

CULE_HD int32_t paddle_motion(int a, int32_t step) {
  const uint8_t bits = joystick_bits(a);
  if (bits & kRightBit) return -step;  // RIGHT lowers the resistance
  if (bits & kLeftBit) return step;
  return 0;
}

// applyActionPaddles (every frame): move, clamp, then fire and reset.
// `step_a` is player A's paddle step (paddle_step); player B's is always
// full strength, as it only ever plays NOOP through ALEInterface::act.
CULE_HD void apply_paddles(Events& e, AleState& s, const ControllerSetup& setup, int action_a, int action_b,
                           int32_t step_a = kPaddleDelta) {
  reset_keys(e, s.difficulty);
  const int32_t delta[2] = {paddle_motion(action_a, step_a), paddle_motion(action_b - kPlayerBNoop, kPaddleDelta)};
  for (int i = 0; i < 2; ++i) {
    int32_t p = s.paddle[i] + delta[i];
    if (p < setup.paddle_min) p = setup.paddle_min;
    if (p > setup.paddle_max) p = setup.paddle_max;
    s.paddle[i] = p;
    e.paddle_resistance[i] = p;
  }
  if (action_a == kReset || action_b == kReset) e.console_reset = 1;
  e.paddle_fire[0] = (joystick_bits(action_a) & kFireBit) ? 1 : 0;
  e.paddle_fire[1] = (joystick_bits(action_b - kPlayerBNoop) & kFireBit) ? 1 : 0;
}

// ALEState::pressSelect: keys released, then SELECT held.
CULE_HD void press_select(Events& e, uint8_t difficulty) {
  reset_keys(e, difficulty);
  e.console_select = 1;
}

// resetPaddles: both paddles centred.
CULE_HD void centre_paddles(Events& e, AleState& s, const ControllerSetup& setup) {
  const int32_t centre = (setup.paddle_min + setup.paddle_max) / 2;
  s.paddle[0] = s.paddle[1] = centre;
  e.paddle_resistance[0] = e.paddle_resistance[1] = centre;
}

// The pins each jack presents, from the events (Joystick/Paddles::read).
// A jack's object reads player A's events when it is the left one; SwapPorts
// plugs that object into the right slot.
CULE_HD Controls controls_from_events(const Events& e, const ControllerSetup& setup) {
  Controls c{};
  uint8_t nibble[2];
  for (int slot = 0; slot < 2; ++slot) {
    const int jack = setup.swap_ports ? 1 - slot : slot;  // which object sits in this slot
    const bool paddles = jack == 0 ? setup.left_paddles : setup.right_paddles;
    if (!paddles) {
      const uint8_t j = e.joystick[jack];
      // SWCHA pins One..Four = up, down, left, right; active low.
      nibble[slot] = (uint8_t)((j & kUpBit ? 0 : 1) | (j & kDownBit ? 0 : 2) | (j & kLeftBit ? 0 : 4) |
                               (j & kRightBit ? 0 : 8));
      c.tia.fire[slot] = (j & kFireBit) ? 0 : 1;
      c.tia.resistance[slot * 2] = c.tia.resistance[slot * 2 + 1] = kMaxResistance;
    } else {
      // Paddles: pin Four/Nine belong to the first paddle of the jack, Three/Five
      // to the second; SwapPaddles exchanges them. Jack 1 has paddles Two/Three.
      const int first = jack * 2 + (setup.swap_paddles ? 1 : 0);
      const int second = jack * 2 + (setup.swap_paddles ? 0 : 1);
      nibble[slot] = (uint8_t)(0x3 | (e.paddle_fire[second] ? 0 : 4) | (e.paddle_fire[first] ? 0 : 8));
      c.tia.fire[slot] = 1;
      c.tia.resistance[slot * 2] = e.paddle_resistance[first];       // pin Nine
      c.tia.resistance[slot * 2 + 1] = e.paddle_resistance[second];  // pin Five
    }
  }
  c.swcha = (uint8_t)(nibble[0] << 4 | nibble[1]);
  c.console_reset = e.console_reset;
  c.console_select = e.console_select;
  c.difficulty_events = e.difficulty_events;
  return c;
}

}  // namespace ale
}  // namespace cule
