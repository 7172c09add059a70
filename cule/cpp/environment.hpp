// ALE's StellaEnvironment for one environment: act() with sticky actions,
// reset_game()'s sequence, pressSelect and softReset, the frame counters.
// Host and device: the CPU backend loops over environments with it, the CUDA
// kernels run it one thread per environment. Facts: ALE_FACTS.md, and
// cule/games_catalogue.json's _meta.primitives.
#pragma once

#include "ale.hpp"
#include "common.hpp"
#include "console.hpp"
#include "games/game.hpp"
#include "mt19937.hpp"

namespace cule {

constexpr int kSoftResetFrames = 4;    // StellaEnvironment::m_num_reset_steps
constexpr int kResetNoopFrames = 60;

// Everything ALE keeps per environment besides the console itself.
struct EnvState {
  Mt19937 rng;              // the environment RNG (sticky actions), seeded at power-on
  GameState game;
  AleState ale;
  Events events;
  int32_t frame_number;
  int32_t episode_frame_number;
  uint8_t action_a, action_b;  // stored actions, repeated when sticky
  uint8_t mode_error;          // set_mode gave up
  uint8_t pad_;
};

// Fixed for a batch: the ROM's wiring and ALE's settings.
struct EnvConfig {
  ControllerSetup controllers;
  float repeat_action_probability;
  int32_t max_num_frames_per_episode;  // 0: no limit
  uint8_t game;                        // GameId
  uint8_t uses_paddles;
};

// Operations on one environment. `Games` maps a GameId to the game's code
// (games/registry.hpp); `buffers` is null when no pixels are wanted.
template <class Cart, class Games>
struct AleEnv {
  Machine& m;
  EnvState& s;
  const RomView& rom;
  const EnvConfig& cfg;
  uint8_t* buffers;

  CULE_HD GameView view() const { return GameView{m}; }

  // One Stella frame with the current events, then the game's step().
  CULE_HD void frame(bool step_game = true) {
    m.controls = ale::controls_from_events(s.events, cfg.controllers);
    console::run_frame<Cart>(m, rom, buffers);
    if (step_game) Games::step(cfg.game, s.game, view());
  }

  // StellaEnvironment::emulate: joystick events once, paddles every frame.
  CULE_HD void emulate(int action_a, int action_b, int frames) {
    if (!cfg.uses_paddles) ale::apply_joysticks(s.events, s.ale.difficulty, action_a, action_b);
    for (int f = 0; f < frames; ++f) {
      if (cfg.uses_paddles) ale::apply_paddles(s.events, s.ale, cfg.controllers, action_a, action_b);
      frame();
    }
  }

  CULE_HD void soft_reset() {
    emulate(kReset, kPlayerBNoop, kSoftResetFrames);
    s.action_a = kNoop;
    s.action_b = kPlayerBNoop;
  }

  // pressSelect(k): SELECT held for k frames without step(), then one NOOP
  // frame; counted as one frame.
  CULE_HD void press_select(int frames) {
    ale::press_select(s.events, s.ale.difficulty);
    for (int f = 0; f < frames; ++f) frame(false);
    emulate(kNoop, kPlayerBNoop, 1);
    ++s.frame_number;
    ++s.episode_frame_number;
  }

  CULE_HD bool truncated() const {
    return cfg.max_num_frames_per_episode > 0 && s.episode_frame_number >= cfg.max_num_frames_per_episode;
  }
  CULE_HD bool game_over() const { return s.game.terminal || truncated(); }

  // ALE's act() with frame_skip 1: draw the two sticky numbers, then one frame
  // unless the episode is over. Returns the reward.
  CULE_HD int act(int action_a, int action_b) {
    // The draws happen even when the probability is 0 and after game over.
    if (s.rng.next_double() >= cfg.repeat_action_probability) s.action_a = (uint8_t)action_a;
    if (s.rng.next_double() >= cfg.repeat_action_probability) s.action_b = (uint8_t)action_b;
    if (game_over()) return 0;
    // noopIllegalActions; RESET is dropped too.
    int a = s.action_a;
    if ((a < kPlayerBNoop && !Games::is_legal(cfg.game, a)) || a == kReset) a = kNoop;
    int b = s.action_b;
    if ((b < kReset && !Games::is_legal(cfg.game, b - kPlayerBNoop)) || b == kReset) b = kPlayerBNoop;
    emulate(a, b, 1);
    ++s.frame_number;
    ++s.episode_frame_number;
    return s.game.reward;
  }

  // StellaEnvironment::reset (ALE's reset_game).
  CULE_HD void reset_game() {
    s.episode_frame_number = 0;
    ale::centre_paddles(s.events, s.ale, cfg.controllers);
    console::system_reset<Cart>(m, rom, rom.tia, buffers);
    emulate(kNoop, kPlayerBNoop, kResetNoopFrames);
    soft_reset();
    Games::reset(cfg.game, s.game);
    Games::set_mode(cfg.game, *this, s.ale.mode);
    soft_reset();
    for (int i = 0;; ++i) {
      const int a = Games::starting_action(cfg.game, i);
      if (a < 0) break;
      emulate(a, kPlayerBNoop, 1);
    }
  }
};

}  // namespace cule
