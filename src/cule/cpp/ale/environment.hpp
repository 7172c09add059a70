// ALE's StellaEnvironment for one environment: act() with sticky actions,
// reset_game()'s sequence, pressSelect and softReset, the frame counters.
// Host and device: the CPU backend loops over environments with it, the CUDA
// kernels run it one thread per environment. Upstream: ALE 0.12.1's
// src/ale/environment/stella_environment.cpp and ale_state.cpp.
#pragma once

#include "ale.hpp"
#include "common.hpp"
#include "console/console.hpp"
#include "ale/games/game.hpp"
#include "mt19937.hpp"

namespace cule {

constexpr int kSoftResetFrames = 4;    // StellaEnvironment::m_num_reset_steps
constexpr int kResetNoopFrames = 60;
constexpr int kDrawsPerAct = 2;  // sticky-action draws of every act(), players A and B

// Everything ALE keeps per environment besides the console itself and the
// environment RNG (sticky actions, seeded at power-on), which the batch keeps
// apart: it is 2.5 KB, and a frame draws two of its words.
#define CULE_ENV_STATE_FIELDS(X)                                                         \
  X(int32_t, frame_number)                                                               \
  X(int32_t, episode_frame_number)                                                       \
  X(int32_t, short_frames) /* frames that ended before the display window's last line */ \
  /* ale-py's vector env (vector/preprocessed_env.cpp) keeps these per environment: */   \
  X(int32_t, elapsed_steps) /* frames since its reset, for truncation */                 \
  X(int32_t, lives)         /* lives after the last step */                              \
  X(int32_t, short_steps)   /* vector steps that had to be redrawn for short frames */   \
  X(int32_t, paddle_step_a) /* player A's stored paddle step (ale.hpp paddle_step) */    \
  X(uint8_t, draw_all)      /* draw every frame, not only the captured ones */           \
  X(uint8_t, action_a) X(uint8_t, action_b) /* stored actions, repeated when sticky */   \
  X(uint8_t, mode_error)    /* set_mode gave up */

struct EnvState {
  GameState game;
  AleState ale;
  Events events;
  CULE_ENV_STATE_FIELDS(CULE_DECLARE_FIELD)
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
  MtStream rng;  // the environment RNG
  const RomView& rom;
  const EnvConfig& cfg;
  uint8_t* buffers;
  bool draw = true;  // produce pixels for the frames run now
  FrameRecorder* recorder = nullptr;  // set: drawn frames are recorded for tia::replay instead

  CULE_HD GameView view() const { return GameView{m}; }

  // One Stella frame with the current events, then the game's step().
  CULE_HD void frame(bool step_game = true) {
    m.controls = ale::controls_from_events(s.events, cfg.controllers);
    console::run_frame<Cart>(m, rom, draw ? buffers : nullptr, draw ? recorder : nullptr);
    // Rows such a frame does not reach keep the picture of two frames ago,
    // so every frame of that environment must be drawn from now on.
    if (m.tia.last_update_clock < m.tia.stop_display_clock) ++s.short_frames;
    if (step_game) Games::step(cfg.game, s.game, view());
  }

  // StellaEnvironment::emulate: joystick events once, paddles every frame.
  CULE_HD void emulate(int action_a, int action_b, int frames, int32_t paddle_step_a = kPaddleDelta) {
    if (!cfg.uses_paddles) ale::apply_joysticks(s.events, s.ale.difficulty, action_a, action_b);
    for (int f = 0; f < frames; ++f) {
      if (cfg.uses_paddles) ale::apply_paddles(s.events, s.ale, cfg.controllers, action_a, action_b, paddle_step_a);
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
  // unless the episode is over. Returns the reward. `action_a` is an action
  // word (ale.hpp): a sticky repeat keeps the paddle step with the action.
  CULE_PHASE int act(int32_t action_a, int action_b) {
    // The draws happen even when the probability is 0 and after game over.
    if (rng.next_double() >= cfg.repeat_action_probability) {
      s.action_a = (uint8_t)action_id(action_a);
      s.paddle_step_a = paddle_step(action_a);
    }
    if (rng.next_double() >= cfg.repeat_action_probability) s.action_b = (uint8_t)action_b;
    if (game_over()) return 0;
    // noopIllegalActions; RESET is dropped too.
    int a = s.action_a;
    if ((a < kPlayerBNoop && !Games::is_legal(cfg.game, a)) || a == kReset) a = kNoop;
    int b = s.action_b;
    if ((b < kReset && !Games::is_legal(cfg.game, b - kPlayerBNoop)) || b == kReset) b = kPlayerBNoop;
    emulate(a, b, 1, s.paddle_step_a);
    ++s.frame_number;
    ++s.episode_frame_number;
    return s.game.reward;
  }

  // One step of the vector env, `frameskip` ALE acts, as the step policy
  // `Step` (vector.hpp) has it. capture(k, screen) receives the palette
  // indices of the step's last frame (k = 0) and the one before (k = 1);
  // frames nobody captures are not drawn. Returns the summed reward.
  //
  // VectorEnvStep, ale-py's vector env (PreprocessedEnv::step): the acts stop
  // early when the episode ends, and the captures are those of the frames
  // the loop reached, so an episode's last observation can be built from
  // older frames, as in ale-py.
  //
  // GymnasiumStep, gymnasium's AtariEnv.step: all `frameskip` acts run
  // (ALE's act emulates nothing once the game is over), the last frame is
  // the observation (captured as both), and truncation is ALE's own frame
  // limit.
  template <class Step, class Capture>
  CULE_PHASE int vector_step(int32_t action, int frameskip, int max_episode_steps, bool episodic_life,
                             Capture&& capture, bool& over, bool& truncated, bool& life_lost) {
    int reward = 0;
    over = truncated = life_lost = false;
    if constexpr (Step::kStopsAtEpisodeEnd) {
      for (int skip_id = frameskip; skip_id > 0; --skip_id) {
        draw = s.draw_all || skip_id <= 2;
        reward += act(action, kPlayerBNoop);
        over = game_over();
        ++s.elapsed_steps;
        truncated = s.elapsed_steps >= max_episode_steps;
        const int lives_now = Games::lives(cfg.game, s.game);
        life_lost = lives_now < s.lives && lives_now > 0;
        if (over || truncated || (episodic_life && life_lost)) break;
        if (skip_id <= 2) capture(skip_id - 1, (const uint8_t*)console::current_buffer(m, buffers));
      }
    } else {
      for (int skip_id = frameskip; skip_id > 0; --skip_id) {
        draw = s.draw_all || skip_id == 1;
        reward += act(action, kPlayerBNoop);
      }
      over = s.game.terminal;
      truncated = this->truncated();
      const uint8_t* screen = console::current_buffer(m, buffers);
      capture(0, screen);
      capture(1, screen);
    }
    draw = true;
    s.lives = Games::lives(cfg.game, s.game);
    return reward;
  }

  // StellaEnvironment::reset (ALE's reset_game).
  CULE_PHASE void reset_game() {
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
