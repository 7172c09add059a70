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

  Emulator(std::vector<uint8_t> image, const RomSettings& settings, int num_envs)
      : image_(std::move(image)), settings_(settings), n_(num_envs) {
    if (num_envs <= 0) throw std::invalid_argument("num_envs must be positive");
    rng_draws_.resize(kRngDraws);
    std::mt19937 mt(4753849u);
    for (auto& d : rng_draws_) d = (uint32_t)mt();
    rom_.image = image_.data();
    rom_.rng_draws = rng_draws_.data();
    rom_.rng_count = kRngDraws;
    rom_.initial_switches = settings.initial_switches;
    machines_.resize(n_);
    ale_.resize(n_);
    events_.resize(n_);
    power_on();
  }

  int num_envs() const { return n_; }
  bool is_pal() const { return pal_; }
  const TiaConfig& tia_config() const { return rom_.tia; }
  int screen_height() const { return rom_.tia.height; }

  // The Console constructor for every environment: one detection run (it is
  // the same in all of them), then the final System::reset, copied to all.
  void power_on() {
    TiaConfig ntsc{settings_.ystart, settings_.height, 290, 0, (uint8_t)settings_.hmove_blanks};
    with_cart(settings_.cart, [&](auto cart) {
      using Cart = decltype(cart);
      Machine& m = machines_[0];
      rom_.tia = ntsc;
      const Controls idle = ale::controls_from_events(Events{}, settings_.controllers);
      pal_ = console::power_on_detect_pal<Cart>(m, rom_, ntsc, settings_.detect_format, idle) || settings_.fixed_pal;
      TiaConfig final_config = ntsc;
      if (pal_) {
        final_config.max_scanlines = 342;
        final_config.color_loss = 1;
        if (final_config.height == 210) final_config.height = 250;
      }
      rom_.tia = final_config;
      buffers_.assign((size_t)n_ * buffer_bytes(), 0);
      console::system_reset<Cart>(m, rom_, final_config, buffer(0));
      for (int i = 1; i < n_; ++i) machines_[i] = m;
    });
    for (int i = 0; i < n_; ++i) {
      ale_[i] = AleState{};
      events_[i] = Events{};
    }
  }

  // System::reset of one environment (the first step of ALE's reset_game).
  void system_reset(int env) {
    check(env);
    with_cart(settings_.cart, [&](auto cart) {
      console::system_reset<decltype(cart)>(machines_[env], rom_, rom_.tia, buffer(env));
    });
  }

  void centre_paddles(int env) { ale::centre_paddles(events_[check(env)], ale_[env], settings_.controllers); }
  void set_difficulty(int env, int d) { ale_[check(env)].difficulty = (uint8_t)d; }

  // StellaEnvironment::emulate: joystick events set once for all frames,
  // paddles moved every frame. `draw`: produce pixels (the observed frames).
  void emulate(int env, int action_a, int action_b, int frames, bool draw = true) {
    check(env);
    Events& e = events_[env];
    const ControllerSetup& setup = settings_.controllers;
    const bool paddles = setup.left_paddles || setup.right_paddles;
    if (!paddles) ale::apply_joysticks(e, ale_[env].difficulty, action_a, action_b);
    for (int f = 0; f < frames; ++f) {
      if (paddles) ale::apply_paddles(e, ale_[env], setup, action_a, action_b);
      run_frame(env, draw);
    }
  }

  // StellaEnvironment::pressSelect's frames (SELECT held, nothing else).
  void press_select(int env, int frames) {
    check(env);
    ale::press_select(events_[env], ale_[env].difficulty);
    for (int f = 0; f < frames; ++f) run_frame(env, true);
  }

  const Machine& machine(int env) const { return machines_[check(env)]; }
  Machine& machine(int env) { return machines_[check(env)]; }
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

  void run_frame(int env, bool draw) {
    Machine& m = machines_[env];
    m.controls = ale::controls_from_events(events_[env], settings_.controllers);
    with_cart(settings_.cart, [&](auto cart) {
      console::run_frame<decltype(cart)>(m, rom_, draw ? buffer(env) : nullptr);
    });
  }

  std::vector<uint8_t> image_;
  RomSettings settings_;
  int n_;
  bool pal_ = false;
  RomView rom_{};
  std::vector<uint32_t> rng_draws_;
  std::vector<Machine> machines_;
  std::vector<AleState> ale_;
  std::vector<Events> events_;
  std::vector<uint8_t> buffers_;
};

}  // namespace cule
