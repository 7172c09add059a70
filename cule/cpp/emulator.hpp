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
#include "preprocess.hpp"

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

// ale-py AtariVectorEnv's preprocessing arguments (plus cule's mode choice).
struct VectorOptions {
  int frameskip = 4, stack_num = 4, img_height = 84, img_width = 84;
  bool grayscale = true, maxpool = true;
  int noop_max = 30;
  bool fire_reset = true, has_fire = false;  // has_fire: FIRE is in the action set
  bool episodic_life = false, life_loss_info = false, reward_clipping = true;
  int max_episode_steps = 108000;
  bool same_step = false;   // AutoresetMode.SAME_STEP
  bool gymnasium = false;   // gymnasium AtariEnv steps instead (cule.make)
  int default_mode = 0, mode = 0, difficulty = 0;
  int cache_size = 0;       // reset_mode "cache": K start states (0: ALE's reset every time)
};

// PreprocessedEnv's per-environment fields beside EnvState's.
struct VectorState {
  Mt19937 noop_rng;  // std::mt19937 seeded with the reset seed
  int32_t reward;
  uint8_t game_over, truncated, life_lost;
};

// What EnvVectorizer reports for one environment.
struct EnvResult {
  int32_t reward = 0;
  uint8_t terminated = 0, truncated = 0;
  int32_t lives = 0, frame_number = 0, episode_frame_number = 0;
};

// std::uniform_int_distribution<int>(0, range - 1) over std::mt19937 as
// libstdc++ (GCC 11+) draws it: Lemire's multiply-shift with rejection.
inline uint32_t uniform_below(Mt19937& g, uint32_t range) {
  uint64_t product = (uint64_t)g.next() * range;
  uint32_t low = (uint32_t)product;
  if (low < range) {
    const uint32_t threshold = (0u - range) % range;
    while (low < threshold) {
      product = (uint64_t)g.next() * range;
      low = (uint32_t)product;
    }
  }
  return (uint32_t)(product >> 32);
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

  // ---- ale-py's vector env (vector/preprocessed_env.cpp, env_vectorizer.cpp)

  // Configures the PreprocessedEnv pipeline for every environment.
  void configure_vector(const VectorOptions& o, const uint8_t* rgb, const uint8_t* gray) {
    if (o.stack_num <= 0 || o.frameskip <= 0) throw std::invalid_argument("stack_num and frameskip must be positive");
    const int h = rom_.tia.height;
    if (o.img_height <= 0 || o.img_width <= 0 || o.img_height > h || o.img_width > (int)kScreenWidth)
      throw std::invalid_argument("observations can shrink the " + std::to_string(h) + "x160 screen, not grow it: got " +
                                  std::to_string(o.img_height) + "x" + std::to_string(o.img_width));
    vopt_ = o;
    std::memcpy(palette_rgb_, rgb, sizeof palette_rgb_);
    std::memcpy(palette_gray_, gray, sizeof palette_gray_);
    const int cn = o.grayscale ? 1 : 3;
    taps_.assign(2 * (kScreenWidth + h), AreaTap{});
    plan_ = preprocess::make_plan(kScreenWidth, h, o.img_width, o.img_height, cn, taps_.data());
    raw_bytes_ = (size_t)h * kScreenWidth * cn;
    obs_bytes_ = (size_t)o.img_height * o.img_width * cn;
    raw_.assign((size_t)n_ * 2 * raw_bytes_, 0);
    stacks_.assign((size_t)n_ * o.stack_num * obs_bytes_, 0);
    final_.assign(o.same_step ? (size_t)n_ * o.stack_num * obs_bytes_ : 0, 0);
    stack_index_.assign(n_, 0);
    vstates_.assign(n_, VectorState{});
    results_.assign(n_, EnvResult{});
    start_cache_.clear();
  }
  size_t stacked_bytes() const { return (size_t)vopt_.stack_num * obs_bytes_; }

  // Steps (or resets) the listed environments: EnvVectorizer::execute_env.
  // actions are ALE action ids; seeds (one per listed environment, or null)
  // are used by forced resets, < 0 keeping the environment's console and RNGs.
  void vector_run(const int32_t* ids, int count, const int32_t* actions, const int64_t* seeds, bool force_reset,
                  int num_threads) {
    for (int i = 0; i < count; ++i) check(ids[i]);
    if (force_reset && vopt_.cache_size > 0 && count > 0 && seeds && seeds[0] >= 0) build_start_cache(seeds[0]);
    parallel_for(num_threads, count, [&](int i) {
      const int env = ids[i];
      if (force_reset) {
        vector_reset(env, seeds ? seeds[i] : -1);
        write_result(env);
      } else if (!vopt_.same_step) {
        if (episode_over(env)) vector_reset(env, -1);
        else vector_step(env, actions[i]);
        write_result(env);
      } else {
        vector_step(env, actions[i]);
        write_result(env);
        if (episode_over(env)) {
          linearize(env, final_.data() + (size_t)env * stacked_bytes());
          const EnvResult ended = results_[env];
          vector_reset(env, -1);
          write_result(env);
          results_[env].reward = ended.reward;
          results_[env].terminated = ended.terminated;
          results_[env].truncated = ended.truncated;
        }
      }
    });
  }

  // Copies the listed environments' latest results into batch order;
  // final_obs (SameStep only, may be null) gets the pre-reset stack of those
  // that ended and zeros for the others.
  void gather(const int32_t* ids, int count, uint8_t* obs, int32_t* rewards, uint8_t* terminated, uint8_t* truncated,
              int32_t* lives, int32_t* frame_numbers, int32_t* episode_frame_numbers, uint8_t* final_obs) const {
    const size_t bytes = stacked_bytes();
    for (int i = 0; i < count; ++i) {
      const int env = check(ids[i]);
      const EnvResult& r = results_[env];
      linearize(env, obs + i * bytes);
      rewards[i] = r.reward;
      terminated[i] = r.terminated;
      truncated[i] = r.truncated;
      lives[i] = r.lives;
      frame_numbers[i] = r.frame_number;
      episode_frame_numbers[i] = r.episode_frame_number;
      if (final_obs) {
        if ((r.terminated || r.truncated) && !final_.empty())
          std::memcpy(final_obs + i * bytes, final_.data() + (size_t)env * bytes, bytes);
        else
          std::memset(final_obs + i * bytes, 0, bytes);
      }
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
  void parallel_for(int num_threads, int count, F&& f) {
    int threads = num_threads > 0 ? num_threads : (int)std::thread::hardware_concurrency();
    threads = std::max(1, std::min(threads, n_));
    if (!pool_ || pool_->size() != threads) pool_ = std::make_unique<ThreadPool>(threads);
    pool_->run(count, std::function<void(int)>(f));
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
  // ale-py vector env pipeline (configure_vector)
  VectorOptions vopt_{};
  uint8_t palette_rgb_[256 * 3] = {};
  uint8_t palette_gray_[256] = {};
  std::vector<AreaTap> taps_;
  ResizePlan plan_{};
  size_t raw_bytes_ = 0, obs_bytes_ = 0;
  std::vector<uint8_t> raw_, stacks_, final_;  // [N][2] raw frames, [N][stack] observations, [N] final stacks
  std::vector<int> stack_index_;
  std::vector<VectorState> vstates_;
  std::vector<EnvResult> results_;

  uint8_t* raw(int env, int k) { return raw_.data() + ((size_t)env * 2 + k) * raw_bytes_; }

  // reset_mode "cache" (CuLE): start states recorded once, copied on reset.
  struct StartState {
    Machine machine;
    EnvState env;
    std::vector<uint8_t> screens, first_frame;  // both TIA buffers; the processed reset frame
  };
  std::vector<StartState> start_cache_;

  // Entry k is ALE's reset (reset_game, FIRE) followed by k % noop_max NOOPs
  // (environment 0's slot, restored after), so the cache covers the no-op
  // starts ALE's random draw would give.
  void build_start_cache(int64_t seed) {
    const Machine machine0 = machines_[0];
    const EnvState env0 = envs_[0];
    const VectorState v0 = vstates_[0];
    const std::vector<uint8_t> screens0(buffer(0), buffer(0) + buffer_bytes());
    start_cache_.assign(vopt_.cache_size, StartState{});
    for (int k = 0; k < vopt_.cache_size; ++k) {
      load(0, (uint32_t)seed, vopt_.default_mode, 0);
      set_mode(0, vopt_.mode, vopt_.difficulty);
      ale_reset(0, k % (vopt_.noop_max > 0 ? vopt_.noop_max : 1));
      StartState& c = start_cache_[k];
      c.machine = machines_[0];
      c.env = envs_[0];
      c.screens.assign(buffer(0), buffer(0) + buffer_bytes());
      c.first_frame.resize(raw_bytes_);
      preprocess::apply_palette(screen(0), rom_.tia.height * (int)kScreenWidth, vopt_.grayscale, palette_gray_,
                                palette_rgb_, c.first_frame.data());
    }
    machines_[0] = machine0;
    envs_[0] = env0;
    vstates_[0] = v0;
    std::memcpy(buffer(0), screens0.data(), buffer_bytes());
  }

  // ALE's reset_game, FIRE when asked for, then `noops` NOOPs (a game that
  // ends during them is reset again).
  void ale_reset(int env, int noops) {
    reset_game(env);
    const bool fire = vopt_.fire_reset && vopt_.has_fire;
    if (fire) act(env, kFire, kPlayerBNoop);
    for (noops -= (int)fire; noops > 0; --noops) {
      act(env, kNoop, kPlayerBNoop);
      if (game_over(env)) reset_game(env);
    }
  }

  // A start state from the cache, picked with the environment's no-op RNG;
  // the environment keeps its sticky-action RNG and its frame counter
  // (advanced by the start state's frames).
  void cached_reset(int env) {
    const StartState& c = start_cache_[uniform_below(vstates_[env].noop_rng, (uint32_t)start_cache_.size())];
    EnvState& s = envs_[env];
    const Mt19937 rng = s.rng;
    const int32_t frames = s.frame_number;
    machines_[env] = c.machine;
    s = c.env;
    s.rng = rng;
    s.frame_number = frames + c.env.episode_frame_number;
    std::memcpy(buffer(env), c.screens.data(), buffer_bytes());
    std::memcpy(raw(env, 0), c.first_frame.data(), raw_bytes_);
  }

  // PreprocessedEnv::is_episode_over.
  bool episode_over(int env) const {
    const VectorState& v = vstates_[env];
    if (vopt_.gymnasium) return v.game_over || v.truncated;
    return v.game_over || envs_[env].elapsed_steps >= vopt_.max_episode_steps || (vopt_.episodic_life && v.life_lost);
  }

  // PreprocessedEnv::write_to, minus the stack (gather linearizes it).
  void write_result(int env) {
    const VectorState& v = vstates_[env];
    EnvResult& r = results_[env];
    r.reward = v.reward;
    if (vopt_.gymnasium) {
      r.terminated = v.game_over;
      r.truncated = v.truncated;
    } else {
      r.terminated = v.game_over || ((vopt_.life_loss_info || vopt_.episodic_life) && v.life_lost);
      r.truncated = envs_[env].elapsed_steps >= vopt_.max_episode_steps && !r.terminated;
    }
    r.lives = envs_[env].lives;
    r.frame_number = envs_[env].frame_number;
    r.episode_frame_number = envs_[env].episode_frame_number;
  }

  // PreprocessedEnv::reset: a seed >= 0 powers the console on again
  // (setInt("random_seed"), loadROM) and reseeds the no-op RNG; then
  // reset_game, FIRE, a random number of NOOPs (or a cached start state),
  // and a fresh stack.
  void vector_reset(int env, int64_t seed) {
    VectorState& v = vstates_[env];
    if (seed >= 0) {
      load(env, (uint32_t)seed, vopt_.default_mode, 0);
      set_mode(env, vopt_.mode, vopt_.difficulty);
      v.noop_rng.seed((uint32_t)seed);
    }
    if (!start_cache_.empty()) {
      cached_reset(env);
    } else {
      ale_reset(env, (int)uniform_below(v.noop_rng, vopt_.noop_max > 0 ? (uint32_t)vopt_.noop_max : 1u));
      preprocess::apply_palette(screen(env), rom_.tia.height * (int)kScreenWidth, vopt_.grayscale, palette_gray_,
                                palette_rgb_, raw(env, 0));
    }
    std::memset(raw(env, 1), 0, raw_bytes_);
    std::memset(stacks_.data() + (size_t)env * stacked_bytes(), 0, stacked_bytes());
    stack_index_[env] = 0;
    process_screen(env);
    EnvState& s = envs_[env];
    s.elapsed_steps = 0;
    s.lives = lives(env);
    v.reward = 0;
    v.game_over = v.truncated = v.life_lost = 0;
  }

  // PreprocessedEnv::step. Frames are drawn only when captured; if a step
  // turns out to contain a frame that ended above the window's last line
  // (whose missing rows ALE fills with an older frame's), the step is run
  // again drawing every frame, and an environment where that happens twice
  // draws every frame from then on.
  void vector_step(int env, int action) {
    const int pixels = rom_.tia.height * (int)kScreenWidth;
    // The newest frame comes last (k = 0); pooling it with the one before as
    // it is converted saves process_screen a pass.
    bool pooled = false, have_before = false;
    auto capture = [&](int k, const uint8_t* screen) {
      if (k == 0 && vopt_.maxpool && have_before) {
        preprocess::apply_palette_max(screen, pixels, vopt_.grayscale, palette_gray_, palette_rgb_, raw(env, 1),
                                      raw(env, 0));
        pooled = true;
      } else {
        preprocess::apply_palette(screen, pixels, vopt_.grayscale, palette_gray_, palette_rgb_, raw(env, k));
        have_before = have_before || k == 1;
      }
    };
    VectorState& v = vstates_[env];
    with_cart(settings_.cart, [&](auto cart) {
      AleEnv<decltype(cart), Games> e{machines_[env], envs_[env], rom_, config_, buffer(env)};
      const Machine machine_before = machines_[env];
      const EnvState state_before = envs_[env];
      bool over, trunc, lost;
      int reward = e.vector_step(action, vopt_.frameskip, vopt_.max_episode_steps, vopt_.episodic_life,
                                 vopt_.gymnasium, capture, over, trunc, lost);
      const bool short_frame = envs_[env].short_frames != state_before.short_frames;
      // gymnasium shows the last frame ALE emulated, which is not the step's
      // last when the episode ended inside it.
      const bool ended_early = vopt_.gymnasium && (over || trunc);
      if (!state_before.draw_all && (short_frame || ended_early)) {
        pooled = have_before = false;
        machines_[env] = machine_before;
        envs_[env] = state_before;
        envs_[env].draw_all = 1;
        reward = e.vector_step(action, vopt_.frameskip, vopt_.max_episode_steps, vopt_.episodic_life,
                               vopt_.gymnasium, capture, over, trunc, lost);
        // One short frame is usually a game restarting; a second means the
        // game draws short frames, so draw them all from now on.
        if (short_frame) ++envs_[env].short_steps;
        envs_[env].draw_all = envs_[env].short_steps >= 2;
      }
      v.reward = vopt_.reward_clipping ? std::clamp(reward, -1, 1) : reward;
      v.game_over = over;
      v.truncated = trunc;
      v.life_lost = lost;
    });
    process_screen(env, pooled);
  }

  // PreprocessedEnv::process_screen: max-pool into the newest raw frame
  // (unless the capture did), resize into the stack's next slot.
  void process_screen(int env, bool pooled = false) {
    uint8_t* newest = raw(env, 0);
    if (vopt_.maxpool && !pooled) preprocess::max_in_place(newest, raw(env, 1), (int)raw_bytes_);
    float scratch[2 * kScreenWidth * 3];
    preprocess::resize(plan_, newest,
                       stacks_.data() + (size_t)env * stacked_bytes() + (size_t)stack_index_[env] * obs_bytes_,
                       scratch);
    stack_index_[env] = (stack_index_[env] + 1) % vopt_.stack_num;
  }

  // The ring as a stack, oldest frame first.
  void linearize(int env, uint8_t* out) const {
    const uint8_t* ring = stacks_.data() + (size_t)env * stacked_bytes();
    for (int i = 0; i < vopt_.stack_num; ++i)
      std::memcpy(out + i * obs_bytes_, ring + (size_t)((stack_index_[env] + i) % vopt_.stack_num) * obs_bytes_,
                  obs_bytes_);
  }
};

}  // namespace cule
