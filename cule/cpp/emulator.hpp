// The CPU backend's batch of environments: machines, ALE input state and
// frame buffers for N copies of one ROM. Host-only (std::vector); the chip
// code it calls is the same the CUDA kernels run.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
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

// A fixed set of worker threads that run one job over task indices 0..n-1;
// the calling thread works too. Threads are created once: starting threads
// per step costs more than a frame of emulation.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this] { work(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return (int)workers_.size() + 1; }

  void run(int tasks, const std::function<void(int)>& job) {
    if (workers_.empty() || tasks <= 1) {
      for (int i = 0; i < tasks; ++i) job(i);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      tasks_ = tasks;
      next_ = 0;
      busy_ = (int)workers_.size();
      ++generation_;
    }
    wake_.notify_all();
    drain();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return busy_ == 0; });
    job_ = nullptr;
  }

 private:
  void drain() {
    for (int i = next_++; i < tasks_; i = next_++) (*job_)(i);
  }
  void work() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stopping_) return;
      }
      drain();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (--busy_ == 0) done_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;
  std::atomic<int> next_{0};
  int tasks_ = 0, busy_ = 0;
  uint64_t generation_ = 0;
  bool stopping_ = false;
};

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
    s.ale.mode = (uint16_t)mode;
    s.ale.difficulty = (uint8_t)difficulty;
    s.action_a = kNoop;
    s.action_b = kPlayerBNoop;
    reset_game(env);
  }

  // ALE's setMode / setDifficulty: stored, applied by the next reset_game.
  void set_mode(int env, int mode, int difficulty) {
    envs_[check(env)].ale.mode = (uint16_t)mode;
    envs_[env].ale.difficulty = (uint8_t)difficulty;
  }

  void reset_game(int env) {
    with_env(env, true, [](auto& e) { e.reset_game(); });
  }

  int act(int env, int action_a, int action_b, bool draw = true) {
    int reward = 0;
    with_env(env, draw, [&](auto& e) { reward = e.act(action_a, action_b); });
    return reward;
  }

  // Copies every environment's current screen (palette indices) and lives.
  void observe(uint8_t* screens, int32_t* lives) const {
    const size_t frame = (size_t)rom_.tia.height * kScreenWidth;
    for (int env = 0; env < n_; ++env) {
      std::memcpy(screens + env * frame, screen(env), frame);
      lives[env] = this->lives(env);
    }
  }

  // The observation pipeline of ale-py's vector env, minus resizing: the
  // palette (RGB or ALE's grayscale table), max-pool of the last two captured
  // frames, a ring of `stack_num` processed frames per environment.
  void configure_observation(const uint8_t* rgb, const uint8_t* gray, bool grayscale, int stack_num, bool maxpool) {
    if (stack_num <= 0) throw std::invalid_argument("stack_num must be positive");
    std::memcpy(palette_rgb_, rgb, sizeof palette_rgb_);
    std::memcpy(palette_gray_, gray, sizeof palette_gray_);
    grayscale_ = grayscale;
    stack_num_ = stack_num;
    maxpool_ = maxpool;
    const size_t frame = (size_t)rom_.tia.height * kScreenWidth;
    captures_.assign((size_t)n_ * 2 * frame, 0);
    stacks_.assign((size_t)n_ * stack_num_ * observation_frame_bytes(), 0);
    stack_index_.assign(n_, 0);
  }
  int stack_num() const { return stack_num_; }
  size_t observation_frame_bytes() const {
    return (size_t)rom_.tia.height * kScreenWidth * (grayscale_ ? 1 : 3);
  }

  // ale-py vector env steps for every active environment (AleEnv::vector_step),
  // then each active environment's observation is pushed onto its stack.
  // Frames are drawn only when captured; if a step turns out to contain a
  // frame that ended above the window's last line (whose missing rows ALE
  // fills with an older frame's), the step is run again drawing every frame,
  // and an environment where that happens twice draws every frame from then on.
  void step_batch(const int32_t* actions, const uint8_t* active, int frameskip, int max_episode_steps,
                  bool episodic_life, bool gymnasium, int32_t* rewards, uint8_t* game_over, uint8_t* truncated, uint8_t* life_lost,
                  int32_t* lives, int num_threads) {
    const uint32_t frame = (uint32_t)rom_.tia.height * kScreenWidth;
    parallel_for(num_threads, [&](int env) {
      if (active && !active[env]) {
        rewards[env] = 0;
        game_over[env] = truncated[env] = life_lost[env] = 0;
        lives[env] = envs_[env].lives;
        return;
      }
      uint8_t* capture[2] = {captures_.data() + (size_t)env * 2 * frame, captures_.data() + (size_t)env * 2 * frame + frame};
      with_cart(settings_.cart, [&](auto cart) {
        AleEnv<decltype(cart), Games> e{machines_[env], envs_[env], rom_, config_, buffer(env)};
        const Machine machine_before = machines_[env];
        const EnvState state_before = envs_[env];
        bool over, trunc, lost;
        int reward = e.vector_step(actions[env], frameskip, max_episode_steps, episodic_life, gymnasium, capture,
                                   frame, over, trunc, lost);
        const bool short_frame = envs_[env].short_frames != state_before.short_frames;
        // gymnasium shows the last frame ALE emulated, which is not the step's
        // last when the episode ended inside it.
        const bool ended_early = gymnasium && (over || trunc);
        if (!state_before.draw_all && (short_frame || ended_early)) {
          machines_[env] = machine_before;
          envs_[env] = state_before;
          envs_[env].draw_all = 1;
          reward = e.vector_step(actions[env], frameskip, max_episode_steps, episodic_life, gymnasium, capture, frame,
                                 over, trunc, lost);
          // One short frame is usually a game restarting; a second means the
          // game draws short frames, so draw them all from now on.
          if (short_frame) ++envs_[env].short_steps;
          envs_[env].draw_all = envs_[env].short_steps >= 2;
        }
        rewards[env] = reward;
        game_over[env] = over;
        truncated[env] = trunc;
        life_lost[env] = lost;
        lives[env] = envs_[env].lives;
      });
      process_screen(env);
    });
  }

  // ale-py vector env reset of the masked environments: reset_game, then the
  // captures hold the screen and a black frame, and the stack only that frame.
  void vector_reset_batch(const uint8_t* mask, int num_threads) {
    const uint32_t frame = (uint32_t)rom_.tia.height * kScreenWidth;
    parallel_for(num_threads, [&](int env) {
      if (!mask[env]) return;
      reset_game(env);
      envs_[env].elapsed_steps = 0;
      envs_[env].lives = lives(env);
      uint8_t* c = captures_.data() + (size_t)env * 2 * frame;
      std::memcpy(c, screen(env), frame);
      std::memset(c + frame, 0, frame);
      std::memset(stacks_.data() + (size_t)env * stack_num_ * observation_frame_bytes(), 0,
                  stack_num_ * observation_frame_bytes());
      stack_index_[env] = 0;
      process_screen(env);
    });
  }

  // Every environment's stack, oldest frame first: [N][stack][H][160](x3).
  void observations(uint8_t* out) const {
    const size_t f = observation_frame_bytes();
    for (int env = 0; env < n_; ++env)
      for (int i = 0; i < stack_num_; ++i) {
        const int slot = (stack_index_[env] + i) % stack_num_;
        std::memcpy(out + ((size_t)env * stack_num_ + i) * f, stacks_.data() + ((size_t)env * stack_num_ + slot) * f, f);
      }
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
  void parallel_for(int num_threads, F&& f) {
    int threads = num_threads > 0 ? num_threads : (int)std::thread::hardware_concurrency();
    threads = std::max(1, std::min(threads, n_));
    if (!pool_ || pool_->size() != threads) pool_ = std::make_unique<ThreadPool>(threads);
    pool_->run(n_, std::function<void(int)>(f));
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
  std::unique_ptr<ThreadPool> pool_;
  // observation pipeline (configure_observation)
  uint8_t palette_rgb_[256 * 3] = {};
  uint8_t palette_gray_[256] = {};
  bool grayscale_ = true, maxpool_ = true;
  int stack_num_ = 1;
  std::vector<uint8_t> captures_, stacks_;
  std::vector<int> stack_index_;

  // PreprocessedEnv::process_screen without the resize.
  void process_screen(int env) {
    const size_t pixels = (size_t)rom_.tia.height * kScreenWidth;
    const uint8_t* last = captures_.data() + (size_t)env * 2 * pixels;
    const uint8_t* before = last + pixels;
    uint8_t* out = stacks_.data() + ((size_t)env * stack_num_ + stack_index_[env]) * observation_frame_bytes();
    if (grayscale_) {
      for (size_t i = 0; i < pixels; ++i) {
        const uint8_t a = palette_gray_[last[i]];
        out[i] = maxpool_ ? std::max(a, palette_gray_[before[i]]) : a;
      }
    } else {
      for (size_t i = 0; i < pixels; ++i)
        for (int c = 0; c < 3; ++c) {
          const uint8_t a = palette_rgb_[last[i] * 3 + c];
          out[i * 3 + c] = maxpool_ ? std::max(a, palette_rgb_[before[i] * 3 + c]) : a;
        }
    }
    stack_index_[env] = (stack_index_[env] + 1) % stack_num_;
  }
};

}  // namespace cule
