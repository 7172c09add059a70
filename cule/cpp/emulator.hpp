// The CPU backend's batch of environments: machines, ALE input state and
// frame buffers for N copies of one ROM. Host-only (std::vector); the chip
// code it calls is the same the CUDA kernels run.
#pragma once

#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ale.hpp"
#include "carts.hpp"
#include "console.hpp"
#include "environment.hpp"
#include "games/registry.hpp"

namespace cule {

struct RomSettings {
  CartType cart;
  uint16_t ystart = 34, height = 210;
  bool hmove_blanks = true;
  bool fixed_pal = false;    // Display.Format = PAL (no detection)
  bool detect_format = true; // Display.Format = AUTO-DETECT
  uint8_t initial_switches = 0x3F;
  ControllerSetup controllers{0, 0, 0, 0, 27450, 790196};
};

// Calls f(CartX{}) for the mapper of `type`: the one place a run-time cart
// type becomes a template argument.
template <class F>
auto with_cart(CartType type, F&& f) {
  switch (type) {
    case CartType::k2K: return f(Cart2K{});
    case CartType::k4K: return f(Cart4K{});
    case CartType::kF8: return f(CartF8{});
    case CartType::kF6: return f(CartF6{});
    case CartType::kF8SC: return f(CartF8SC{});
    case CartType::kF6SC: return f(CartF6SC{});
    case CartType::kE0: return f(CartE0{});
    case CartType::kFE: return f(CartFE{});
    case CartType::kDPC: return f(CartDPC{});
  }
  throw std::invalid_argument("unknown cartridge type");
}

class Emulator {
 public:
  // 2^20 draws of the system RNG: 128 + 1 per power-on, then 1 (129 with a
  // SuperChip) per reset; the table wraps after that (documented limit).
  static constexpr uint32_t kRngDraws = 1u << 20;

  Emulator(std::vector<uint8_t> image, const RomSettings& settings, int game, int num_envs,
           float repeat_action_probability, int max_num_frames_per_episode)
      : image_(std::move(image)), settings_(settings), n_(num_envs) {
    if (num_envs <= 0) throw std::invalid_argument("num_envs must be positive");
    if (game < 0 || game >= (int)GameId::kCount) throw std::invalid_argument("unknown game id");
    rng_draws_.resize(kRngDraws);
    std::mt19937 mt(4753849u);
    for (auto& d : rng_draws_) d = (uint32_t)mt();
    rom_.image = image_.data();
    rom_.rng_draws = rng_draws_.data();
    rom_.rng_count = kRngDraws;
    rom_.initial_switches = settings.initial_switches;
    config_.controllers = settings.controllers;
    Games::paddle_range((uint8_t)game, config_.controllers.paddle_min, config_.controllers.paddle_max);
    config_.repeat_action_probability = repeat_action_probability;
    config_.max_num_frames_per_episode = max_num_frames_per_episode;
    config_.game = (uint8_t)game;
    config_.uses_paddles = settings.controllers.left_paddles || settings.controllers.right_paddles;
    power_on_template();
    machines_.assign(n_, power_on_);
    envs_.resize(n_);
    buffers_.assign((size_t)n_ * buffer_bytes(), 0);
  }

  int num_envs() const { return n_; }
  bool is_pal() const { return pal_; }
  int screen_height() const { return rom_.tia.height; }

  // ALE's loadROM: a freshly built console, the environment RNG seeded, the
  // mode and difficulty stored, then reset_game.
  void load(int env, uint32_t seed, int mode, int difficulty) {
    check(env);
    machines_[env] = power_on_;
    std::memset(buffer(env), 0, buffer_bytes());
    EnvState& s = envs_[env];
    s = EnvState{};
    s.rng.seed(seed);
    s.ale.mode = (uint8_t)mode;
    s.ale.difficulty = (uint8_t)difficulty;
    s.action_a = kNoop;
    s.action_b = kPlayerBNoop;
    reset_game(env);
  }

  void reset_game(int env) {
    with_env(env, true, [](auto& e) { e.reset_game(); });
  }

  int act(int env, int action_a, int action_b, bool draw = true) {
    int reward = 0;
    with_env(env, draw, [&](auto& e) { reward = e.act(action_a, action_b); });
    return reward;
  }

  const Machine& machine(int env) const { return machines_[check(env)]; }
  const EnvState& state(int env) const { return envs_[check(env)]; }
  bool game_over(int env) const {
    const EnvState& s = envs_[check(env)];
    return s.game.terminal ||
           (config_.max_num_frames_per_episode > 0 && s.episode_frame_number >= config_.max_num_frames_per_episode);
  }
  int lives(int env) const { return Games::lives(config_.game, envs_[check(env)].game); }
  const uint8_t* screen(int env) const {
    return buffers_.data() + (size_t)check(env) * buffer_bytes() +
           (size_t)machines_[env].tia.current_buffer * rom_.tia.height * kScreenWidth;
  }

 private:
  size_t buffer_bytes() const { return 2u * rom_.tia.height * kScreenWidth; }
  uint8_t* buffer(int env) { return buffers_.data() + (size_t)env * buffer_bytes(); }
  int check(int env) const {
    if (env < 0 || env >= n_) throw std::out_of_range("env index " + std::to_string(env) + " out of range");
    return env;
  }

  template <class F>
  void with_env(int env, bool draw, F&& f) {
    check(env);
    with_cart(settings_.cart, [&](auto cart) {
      AleEnv<decltype(cart), Games> e{machines_[env], envs_[env], rom_, config_, draw ? buffer(env) : nullptr};
      f(e);
    });
  }

  // The Console constructor, once: NTSC/PAL detection is the same for every
  // environment, so each load copies the resulting machine.
  void power_on_template() {
    TiaConfig ntsc{settings_.ystart, settings_.height, 290, 0, (uint8_t)settings_.hmove_blanks};
    with_cart(settings_.cart, [&](auto cart) {
      using Cart = decltype(cart);
      rom_.tia = ntsc;
      const Controls idle = ale::controls_from_events(Events{}, config_.controllers);
      pal_ = console::power_on_detect_pal<Cart>(power_on_, rom_, ntsc, settings_.detect_format, idle) ||
             settings_.fixed_pal;
      TiaConfig final_config = ntsc;
      if (pal_) {
        final_config.max_scanlines = 342;
        final_config.color_loss = 1;
        if (final_config.height == 210) final_config.height = 250;
      }
      rom_.tia = final_config;
      console::system_reset<Cart>(power_on_, rom_, final_config, nullptr);
    });
  }

  std::vector<uint8_t> image_;
  RomSettings settings_;
  int n_;
  bool pal_ = false;
  RomView rom_{};
  EnvConfig config_{};
  Machine power_on_{};
  std::vector<uint32_t> rng_draws_;
  std::vector<Machine> machines_;
  std::vector<EnvState> envs_;
  std::vector<uint8_t> buffers_;
};

}  // namespace cule
