// The CPU backend's batch of environments: machines, ALE input state and
// frame buffers for N copies of one ROM. Host-only (std::vector); the chip
// code it calls is the same the CUDA kernels run.
#pragma once

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "ale/ale.hpp"
#include "ale/games/registry.hpp"
#include "mapper_ops.hpp"
#include "thread_pool.hpp"
#include "vector/preprocess.hpp"
#include "vector/state_rows.hpp"
#include "vector/vector.hpp"

// Every array a BatchView points at, by the name a device backend keeps it
// under (cule._core.batch_arrays): X(name, the BatchView's field, the
// emulator's storage for it). BasicEmulator::walk_arrays expands it.
#define CULE_BATCH_ARRAYS(X)                                                                          \
  X(image, b.rom.image, image_) X(rng_draws, b.rom.rng_draws, rng_draws_) X(power_on, b.power_on, power_on_) \
  X(palette_rgb, b.palette_rgb, palette_rgb_) X(palette_gray, b.palette_gray, palette_gray_)          \
  X(taps, taps, taps_) X(cache_machines, b.cache.machines, cache_machines_)                           \
  X(cache_envs, b.cache.envs, cache_envs_) X(cache_screens, b.cache.screens, cache_screens_)          \
  X(cache_frames, b.cache.first_frames, cache_frames_) X(machines, b.machines, machines_)             \
  X(envs, b.envs, envs_) X(rngs, b.rngs, rngs_) X(vstates, b.vstates, vstates_)                      \
  X(results, b.results, results_) X(buffers, b.buffers, buffers_) X(raw, b.raw, raw_)                 \
  X(stacks, b.stacks, stacks_) X(stack_index, b.stack_index, stack_index_)                           \
  X(final_stacks, b.final_stacks, final_) X(scratch, b.scratch, scratch_)                             \
  X(resize_memo, b.resize_memo, memo) X(saved_machines, b.saved_machines, saved_machines_)            \
  X(saved_envs, b.saved_envs, saved_envs_) X(saved_rngs, b.saved_rngs, saved_rngs_)                   \
  X(render_logs, b.logs, logs) X(log_frames, b.log_frames, frames) X(log_accesses, b.log_accesses, accesses) \
  X(reset_list, b.reset_list, resets) X(reset_count, b.reset_count, reset_count)                      \
  X(code_maps, b.rom.code_maps, code_maps_)

// The arrays only the host's frame loop reads (the CPU backend and the
// launch shim): a GPU's kernels leave them null (CodeMap<Cart>::kUsed is
// false in device code), so a GPU backend need not copy them there.
#define CULE_HOST_LOOP_ARRAYS(X) X(code_maps)

namespace cule {

// A batch of N environments of one ROM on the CPU: the arrays a BatchView
// points at, and a thread pool running VectorEnv over them through the
// mapper's MapperOps. `GameSet` is Games (every game, chosen at run time)
// for the bindings; the fuzz driver (tests/fuzz) uses OneGame<...> so a
// sanitizer build stays small.
template <class GameSet = Games>
class BasicEmulator {
 public:
  // 2^20 draws of the system RNG: 128 + 1 per power-on, then 1 (129 with a
  // SuperChip) per reset; the table wraps after that (documented limit).
  static constexpr uint32_t kRngDraws = 1u << 20;

  BasicEmulator(std::vector<uint8_t> image, const RomSettings& settings, int game, int num_envs,
                float repeat_action_probability, int max_num_frames_per_episode)
      : image_(std::move(image)), settings_(settings), ops_(&mapper_ops<GameSet>(settings.cart)), n_(num_envs) {
    if (num_envs <= 0) throw std::invalid_argument("num_envs must be positive");
    if (game < 0 || game >= (int)GameId::kCount) throw std::invalid_argument("unknown game id");
    const uint32_t need = ops_->rom_bytes;
    if (image_.size() < need)
      throw std::invalid_argument("a " + std::to_string(image_.size()) + "-byte image is too small for its mapper (" +
                                  std::to_string(need) + " bytes)");
    rng_draws_.resize(kRngDraws);
    std::mt19937 mt(4753849u);
    for (auto& d : rng_draws_) d = (uint32_t)mt();
    rom_.image = image_.data();
    code_maps_ = ops_->code_maps(image_.data(), (uint32_t)image_.size());
    rom_.code_maps = code_maps_.empty() ? nullptr : code_maps_.data();
    rom_.rng_draws = rng_draws_.data();
    rom_.rng_count = kRngDraws;
    rom_.initial_switches = settings.initial_switches;
    config_.controllers = settings.controllers;
    GameSet::paddle_range((uint8_t)game, config_.controllers.paddle_min, config_.controllers.paddle_max);
    config_.repeat_action_probability = repeat_action_probability;
    config_.max_num_frames_per_episode = max_num_frames_per_episode;
    config_.game = (uint8_t)game;
    config_.uses_paddles = settings.controllers.left_paddles || settings.controllers.right_paddles;
    power_on_template();
    machines_.assign(n_, power_on_);
    envs_.resize(n_);
    rngs_.resize(n_);
    saved_machines_.resize(n_);
    saved_envs_.resize(n_);
    saved_rngs_.resize(n_);
    buffers_.assign((size_t)n_ * 2 * frame_bytes(), 0);
    opt_.stack_num = 1;  // no pipeline until configure_vector
  }

  // Steps the game through `ops` from now on: a core built for this game
  // alone (host/translated_unit.cpp), whose `layout` (its
  // cule_translated_layout) must match what this build shares with it.
  void use_ops(const MapperOps* ops, const std::vector<uint64_t>& layout) {
    const std::vector<uint64_t> own{sizeof(Machine), sizeof(BatchView), sizeof(MapperOps), ops_->rom_bytes};
    if (!ops || layout != own)
      throw std::invalid_argument("this core was not built from the extension's headers for this mapper: "
                                  "rebuild it (python -m cule.translate --rebuild)");
    ops_ = ops;
  }

  // The code maps of the image (CodeMap), empty for a mapper without.
  const std::vector<uint16_t>& code_maps() const { return code_maps_; }

  int num_envs() const { return n_; }
  bool is_pal() const { return pal_; }
  int screen_height() const { return rom_.tia.height; }
  CartType cart() const { return settings_.cart; }

  // ---- single environments, as ALEInterface (tests, debugging)
  void load(int env, uint32_t seed, int mode, int difficulty) { ops_->load(view(), check(env), seed, mode, difficulty); }
  void set_mode(int env, int mode, int difficulty) { ops_->set_mode(view(), check(env), mode, difficulty); }
  void reset_game(int env) { ops_->reset_game(view(), check(env)); }
  int act(int env, int action_a, int action_b, bool draw = true) {
    return ops_->act(view(), check(env), action_a, action_b, draw);
  }
  // Copies every environment's current screen (palette indices) and lives.
  void observe(uint8_t* screens, int32_t* lives) const {
    for (int env = 0; env < n_; ++env) {
      std::memcpy(screens + env * frame_bytes(), screen(env), frame_bytes());
      lives[env] = this->lives(env);
    }
  }

  // ---- ale-py's vector env (vector.hpp)

  // Configures the PreprocessedEnv pipeline for every environment.
  void configure_vector(const VectorOptions& o, const uint8_t* rgb, const uint8_t* gray) {
    if (o.stack_num <= 0 || o.frameskip <= 0) throw std::invalid_argument("stack_num and frameskip must be positive");
    const int h = rom_.tia.height;
    if (o.img_height <= 0 || o.img_width <= 0 || o.img_height > kMaxObsSide || o.img_width > kMaxObsSide)
      throw std::invalid_argument("img_height and img_width must lie in 1.." + std::to_string(kMaxObsSide) + ": got " +
                                  std::to_string(o.img_height) + "x" + std::to_string(o.img_width));
    opt_ = o;
    std::memcpy(palette_rgb_, rgb, sizeof palette_rgb_);
    std::memcpy(palette_gray_, gray, sizeof palette_gray_);
    const int cn = o.grayscale ? 1 : 3;
    taps_.assign(preprocess::plan_taps(kScreenWidth, h, o.img_width, o.img_height), AreaTap{});
    plan_ = preprocess::make_plan(kScreenWidth, h, o.img_width, o.img_height, cn, taps_.data());
    raw_bytes_ = (uint32_t)(h * kScreenWidth * cn);
    obs_bytes_ = (uint32_t)(o.img_height * o.img_width * cn);
    raw_.assign((size_t)n_ * 2 * raw_bytes_, 0);
    stacks_.assign((size_t)n_ * stacked_bytes(), 0);
    final_.assign(o.same_step ? (size_t)n_ * stacked_bytes() : 0, 0);
    scratch_floats_ = (uint32_t)(2 * o.img_width * cn);
    scratch_.assign((size_t)n_ * scratch_floats_, 0.f);
    memo_.assign((size_t)n_ * preprocess::resize_memo_bytes(plan_), 0);
    stack_index_.assign(n_, 0);
    vstates_.assign(n_, VectorState{});
    results_.assign(n_, EnvResult{});
    cache_machines_.clear();
    cache_envs_.clear();
    cache_screens_.clear();
    cache_frames_.clear();
    configured_ = true;
  }
  size_t stacked_bytes() const { return (size_t)opt_.stack_num * obs_bytes_; }

  // The batch as the kernels see it (pointers into this object's arrays).
  BatchView view() {
    BatchView b{};
    b.rom = rom_;
    b.cfg = config_;
    b.opt = opt_;
    b.plan = plan_;
    b.power_on = &power_on_;
    b.palette_rgb = palette_rgb_;
    b.palette_gray = palette_gray_;
    b.cache = StartStates{cache_machines_.data(), cache_envs_.data(), cache_screens_.data(), cache_frames_.data(),
                          (int32_t)cache_machines_.size()};
    b.machines = lanes_of(machines_);
    b.envs = lanes_of(envs_);
    b.rngs = lanes_of(rngs_);
    b.vstates = vstates_.data();
    b.results = results_.data();
    b.buffers = buffers_.data();
    b.raw = raw_.data();
    b.stacks = stacks_.data();
    b.stack_index = stack_index_.data();
    b.final_stacks = final_.empty() ? nullptr : final_.data();
    b.scratch = scratch_.data();
    b.scratch_floats = scratch_floats_;
    b.resize_memo = memo_.empty() ? nullptr : memo_.data();
    b.saved_machines = lanes_of(saved_machines_);
    b.saved_envs = lanes_of(saved_envs_);
    b.saved_rngs = lanes_of(saved_rngs_);
    b.lanes = 1;
    b.frame_bytes = frame_bytes();
    b.raw_bytes = raw_bytes_;
    b.obs_bytes = obs_bytes_;
    return b;
  }

  // For device backends: every array a BatchView points at, with its host
  // contents (copied to the device once; the lane arrays, named by
  // lane_arrays(), are rearranged into lane layout on the way) ...
  struct ArrayRef {
    const char* name;
    void* data;
    size_t bytes;
  };
  std::vector<ArrayRef> arrays() {
    std::vector<ArrayRef> out;
    BatchView b = view();
    walk_arrays(b, [&](const char* name, auto&, auto& host) {
      if (!is_device_only(host)) out.push_back(ArrayRef{name, host_data(host), host_bytes(host)});
    });
    return out;
  }

  // The arrays of one struct per environment that device batches keep in
  // lane layout (common.hpp), with the struct's bytes.
  std::map<std::string, size_t> lane_arrays() {
    std::map<std::string, size_t> out;
    BatchView b = view();
    walk_arrays(b, [&](const char* name, auto& field, auto&) {
      if (const size_t item = lane_item_bytes(field)) out[name] = item;
    });
    return out;
  }
  // Environments a lane-laid array holds room for: whole tiles.
  size_t lane_padded_envs() const { return ((size_t)n_ + kDeviceLanes - 1) / kDeviceLanes * kDeviceLanes; }

  // The arrays only device batches have, a device backend allocates them
  // where its kernels run (nothing is kept here): the render log, turned on
  // with room for `frames` frame records and `accesses` TIA accesses per
  // environment, and the reset list.
  std::map<std::string, size_t> device_arrays(uint32_t frames, uint32_t accesses) {
    if (frames == 0 || accesses == 0) throw std::invalid_argument("the render log needs room for frames and accesses");
    log_frames_ = frames;
    log_accesses_ = accesses;
    std::map<std::string, size_t> out;
    BatchView b = view();
    walk_arrays(b, [&](const char* name, auto&, auto& host) {
      if (is_device_only(host)) out[name] = host_bytes(host);
    });
    return out;
  }

  // ... and the BatchView with each array at the address given for its name
  // (arrays without an address, or empty ones, become null), the lane arrays
  // and the access log in layout `lanes`.
  template <class Lookup>
  BatchView view_at(Lookup&& address_of, uint32_t lanes) {
    if (lanes == 0) throw std::invalid_argument("lanes must be positive");
    BatchView b = view();
    AreaTap* device_taps = nullptr;
    walk_arrays(b, [&](const char* name, auto& field, auto& host) {
      void* at = host_bytes(host) ? (void*)(uintptr_t)address_of(name) : nullptr;
      place(field, at, lanes);
      if (std::string(name) == "taps") device_taps = (AreaTap*)at;
    });
    // The resize plan points into the taps array.
    if (b.plan.xtab) b.plan.xtab = device_taps + (b.plan.xtab - taps_.data());
    if (b.plan.ytab) b.plan.ytab = device_taps + (b.plan.ytab - taps_.data());
    b.lanes = lanes;
    if (!b.logs || !b.log_frames || !b.log_accesses) b.logs = nullptr;  // steps draw as they go
    b.log_frame_capacity = log_frames_;
    b.log_access_capacity = log_accesses_;
    return b;
  }

  // Builds reset_mode "cache"'s start states for `seed` now (a device
  // backend copies them over before its resets).
  void prepare_start_cache(int64_t seed) {
    if (opt_.cache_size > 0 && seed >= 0) build_start_cache(seed);
  }

  // One call's environments, ready to step on any thread: what vector_run
  // hands its own pool, and what run_batches hands a pool shared by several
  // batches (a batch of many games is one Emulator per game).
  struct BatchRun {
    BatchView view;
    MapperOps::Run run;
    const int32_t* ids;
    const int32_t* actions;  // or null: NOOP
    const int64_t* seeds;    // or null: keep
    bool force_reset;
    void operator()(int i) const { run(view, ids[i], actions ? actions[i] : 0, seeds ? seeds[i] : -1, force_reset); }
  };

  // Checks the ids and builds what the run needs first (reset_mode "cache"'s
  // start states); the step policy (vector.hpp) is picked here, once for the
  // whole batch.
  BatchRun prepare_run(const int32_t* ids, int count, const int32_t* actions, const int64_t* seeds,
                       bool force_reset) {
    check_ids(ids, count, true);
    if (force_reset && opt_.cache_size > 0 && count > 0 && seeds && seeds[0] >= 0) build_start_cache(seeds[0]);
    BatchRun r{view(), nullptr, ids, actions, seeds, force_reset};
    with_step_policy(r.view.opt, [&](auto step) { r.run = ops_->run(step); });
    return r;
  }

  // Steps (or resets) the listed environments: EnvVectorizer::execute_env.
  // actions are action words (ale.hpp: an ALE action id, a paddle step above
  // it); seeds (one per listed environment, or null) are used by forced
  // resets, < 0 keeping the environment's console and RNGs.
  void vector_run(const int32_t* ids, int count, const int32_t* actions, const int64_t* seeds, bool force_reset,
                  int num_threads) {
    const BatchRun r = prepare_run(ids, count, actions, seeds, force_reset);
    parallel_for(num_threads, count, r);
  }

  // Copying the listed environments' latest results into batch order, on
  // any thread: environment ids[i] goes to batch position positions[i] (null:
  // i); final_obs (SameStep only, may be null) gets the pre-reset stack of
  // those that ended and zeros for the others.
  struct BatchGather {
    BatchView view;
    const int32_t* ids;
    const int32_t* positions;
    StepOutputs out;
    void operator()(int i) const { EnvFrames{view, ids[i]}.gather(positions ? positions[i] : i, out); }
  };
  BatchGather prepare_gather(const int32_t* ids, int count, const StepOutputs& out, const int32_t* positions) {
    check_ids(ids, count, false);
    return BatchGather{view(), ids, positions, out};
  }

  // The threads of the last run (null before the first): the results are
  // copied on them too, each environment's on whichever thread claims it.
  ThreadPool* pool() const { return pool_.get(); }

  // Environment states as rows of bytes (state_rows.hpp): row i of `rows`
  // (row_bytes apart) holds environment ids[i]'s state from byte `offset` on.
  uint32_t state_bytes(bool with_rng) { return state_row_bytes(view(), with_rng); }
  // The parts of a row in order, (name, bytes): where two rows differ, which part that is.
  std::vector<std::pair<std::string, uint32_t>> state_layout(bool with_rng) {
    StatePart parts[kMaxStateParts];
    const int n = state_parts(view(), 0, with_rng, parts);
    std::vector<std::pair<std::string, uint32_t>> layout;
    for (int k = 0; k < n; ++k) layout.emplace_back(kStatePartNames[parts[k].id], parts[k].row_bytes());
    return layout;
  }
  // A save writes each row's digest (state_rows.hpp row_digest) to digests[i].
  void save_states(const int32_t* ids, int count, uint8_t* rows, size_t row_bytes, size_t offset, bool with_rng,
                   uint64_t* digests) {
    transfer_states(ids, count, rows, row_bytes, offset, with_rng, true, digests);
  }
  // Refuses every row if one fails check_row (std::invalid_argument naming
  // the row and the fault), else loads them all.
  void load_states(const int32_t* ids, int count, uint8_t* rows, size_t row_bytes, size_t offset, bool with_rng) {
    std::vector<int32_t> faults(count);
    check_states(rows, count, row_bytes, offset, with_rng, nullptr, faults.data());
    for (int i = 0; i < count; ++i)
      if (faults[i] != kStateOk)
        throw std::invalid_argument("state row " + std::to_string(i) + " fails its check (" +
                                    kStateFaultNames[faults[i] - 1] + "); no row was loaded");
    transfer_states(ids, count, rows, row_bytes, offset, with_rng, false, nullptr);
  }
  // load_states without the check: what a damaged row would do unchecked.
  // Only the fuzzer's canary calls it; it is not bound to Python.
  void load_states_unchecked(const int32_t* ids, int count, uint8_t* rows, size_t row_bytes, size_t offset,
                             bool with_rng) {
    transfer_states(ids, count, rows, row_bytes, offset, with_rng, false, nullptr);
  }
  // faults[i]: row i's first fault (state_check.hpp StateFault), kStateOk if
  // it may be loaded. With `digests`, each row's payload must sum to
  // digests[i] too. Reads the rows only.
  void check_states(const uint8_t* rows, int count, size_t row_bytes, size_t offset, bool with_rng,
                    const uint64_t* digests, int32_t* faults) {
    const uint32_t bytes = check_row_size(row_bytes, offset, with_rng);
    const BatchView b = view();
    for (int i = 0; i < count; ++i) {
      const uint8_t* payload = rows + i * row_bytes + offset;
      faults[i] = digests && row_digest(payload, bytes) != digests[i] ? kStateDigest
                                                                       : ops_->check_row(b, payload, with_rng);
    }
  }
  // Forks: src[i]'s state onto dst[i], in order.
  void copy_states(const int32_t* src, const int32_t* dst, int count, bool with_rng) {
    require_configured();
    for (int i = 0; i < count; ++i) check(src[i]), check(dst[i]);
    const BatchView b = view();
    for (int i = 0; i < count; ++i) fork_state(b, src[i], dst[i], with_rng, 0, 1);
  }

  const Machine& machine(int env) const { return machines_[check(env)]; }
  const EnvState& state(int env) const { return envs_[check(env)]; }
  bool game_over(int env) const {
    const EnvState& s = envs_[check(env)];
    return s.game.terminal ||
           (config_.max_num_frames_per_episode > 0 && s.episode_frame_number >= config_.max_num_frames_per_episode);
  }
  int lives(int env) const { return GameSet::lives(config_.game, envs_[check(env)].game); }
  const uint8_t* screen(int env) const {
    return buffers_.data() + ((size_t)check(env) * 2 + machines_[env].tia.current_buffer) * frame_bytes();
  }

 private:
  uint32_t frame_bytes() const { return (uint32_t)rom_.tia.height * kScreenWidth; }
  void require_configured() const {
    if (!configured_) throw std::logic_error("configure_vector() first: the batch has no observation pipeline yet");
  }
  // The ids of one call: in range, and (for a run, whose environments step on
  // several threads at once) none twice.
  void check_ids(const int32_t* ids, int count, bool distinct) const {
    require_configured();
    std::vector<uint8_t> seen(distinct ? n_ : 0);
    for (int i = 0; i < count; ++i) {
      check(ids[i]);
      if (distinct && seen[ids[i]]++) throw std::invalid_argument("env id " + std::to_string(ids[i]) + " listed twice");
    }
  }
  // A row's payload (`offset` on, in rows `row_bytes` long) must fit: no sum that could wrap.
  uint32_t check_row_size(size_t row_bytes, size_t offset, bool with_rng) {
    require_configured();
    const uint32_t bytes = state_bytes(with_rng);
    if (offset > row_bytes || bytes > row_bytes - offset)
      throw std::invalid_argument("state rows of " + std::to_string(row_bytes) + " bytes cannot hold a " +
                                  std::to_string(bytes) + "-byte state from byte " + std::to_string(offset));
    return bytes;
  }
  int check(int env) const {
    if (env < 0 || env >= n_) throw std::out_of_range("env index " + std::to_string(env) + " out of range");
    return env;
  }

  void transfer_states(const int32_t* ids, int count, uint8_t* rows, size_t row_bytes, size_t offset, bool with_rng,
                       bool save, uint64_t* digests) {
    check_row_size(row_bytes, offset, with_rng);
    check_ids(ids, count, !save);  // a state saved twice is fine; two loaded into one environment are not
    const BatchView b = view();
    for (int i = 0; i < count; ++i) {
      const uint64_t digest = transfer_state(b, ids[i], with_rng, rows + i * row_bytes + offset, save, 0, 1);
      if (digests) digests[i] = digest;
    }
  }

  template <class F>
  void parallel_for(int num_threads, int count, F&& f) {
    int threads = num_threads > 0 ? num_threads : (int)std::thread::hardware_concurrency();
    threads = std::max(1, std::min(threads, n_));
    // a fork's child gets threads of its own (ThreadPool: it inherits none)
    if (!pool_ || pool_->size() != threads || pool_->forked()) pool_ = std::make_unique<ThreadPool>(threads);
    pool_->run(count, std::function<void(int)>(f));
  }

  // reset_mode "cache": entry k is ALE's reset (reset_game, FIRE) followed
  // by k % noop_max NOOPs, run in environment 0's slot (restored after), so
  // the cache covers the no-op starts ALE's random draw would give.
  void build_start_cache(int64_t seed) {
    const Machine machine0 = machines_[0];
    const EnvState env0 = envs_[0];
    const Mt19937 rng0 = rngs_[0];
    const std::vector<uint8_t> screens0(buffers_.begin(), buffers_.begin() + 2 * frame_bytes());
    const int k_count = opt_.cache_size;
    cache_machines_.clear();  // the slot's resets below must not use an old cache
    cache_envs_.clear();
    std::vector<Machine> machines;
    std::vector<EnvState> envs;
    std::vector<uint8_t> screens, frames;
    for (int k = 0; k < k_count; ++k) {
      const BatchView b = view();
      ops_->load(b, 0, (uint32_t)seed, opt_.default_mode, 0);
      ops_->set_mode(b, 0, opt_.mode, opt_.difficulty);
      ops_->ale_reset(b, 0, k % (opt_.noop_max > 0 ? opt_.noop_max : 1));
      machines.push_back(machines_[0]);
      envs.push_back(envs_[0]);
      screens.insert(screens.end(), buffers_.begin(), buffers_.begin() + 2 * frame_bytes());
      const size_t at = frames.size();
      frames.resize(at + raw_bytes_);
      EnvFrames{b, 0}.palette(screen(0), frames.data() + at);
    }
    machines_[0] = machine0;
    envs_[0] = env0;
    rngs_[0] = rng0;
    std::copy(screens0.begin(), screens0.end(), buffers_.begin());
    cache_machines_ = std::move(machines);
    cache_envs_ = std::move(envs);
    cache_screens_ = std::move(screens);
    cache_frames_ = std::move(frames);
  }

  // The Console constructor, once: NTSC/PAL detection is the same for every
  // environment, so each load copies the resulting machine.
  void power_on_template() {
    pal_ = ops_->power_on(power_on_, rom_, settings_, ale::controls_from_events(Events{}, config_.controllers));
  }

  // Every array a BatchView points at, named once: f(name, field, host)
  // with the BatchView member (a pointer or a lane array) and the host
  // storage behind it; the render log has no host storage, only its size.
  struct DeviceOnly {
    size_t bytes;
  };
  struct NoField {};  // the taps: the resize plan points into them
  struct HostOnly {};  // the resize memo: device batches run without it (null)
  template <class F>
  void walk_arrays(BatchView& b, F&& f) {
    NoField taps;
    DeviceOnly logs{(size_t)n_ * sizeof(RenderLog)}, frames{(size_t)n_ * log_frames_ * sizeof(FrameRecord)},
        accesses{lane_padded_envs() * log_accesses_ * sizeof(TiaAccess)};
    HostOnly memo;
    DeviceOnly resets{(size_t)n_ * sizeof(int32_t)}, reset_count{sizeof(int32_t)};
#define CULE_WALK_ARRAY(name, field, storage) f(#name, field, storage);
    CULE_BATCH_ARRAYS(CULE_WALK_ARRAY)
#undef CULE_WALK_ARRAY
  }
  template <class T>
  static void* host_data(std::vector<T>& v) { return v.data(); }
  template <class T>
  static size_t host_bytes(const std::vector<T>& v) { return v.size() * sizeof(T); }
  template <class T, size_t N>
  static void* host_data(T (&a)[N]) { return a; }
  template <class T, size_t N>
  static size_t host_bytes(const T (&)[N]) { return sizeof(T) * N; }
  static void* host_data(Machine& m) { return &m; }
  static size_t host_bytes(const Machine&) { return sizeof(Machine); }
  static void* host_data(DeviceOnly&) { return nullptr; }
  static void* host_data(HostOnly&) { return nullptr; }
  static size_t host_bytes(const HostOnly&) { return 0; }
  static size_t host_bytes(const DeviceOnly& d) { return d.bytes; }
  template <class H>
  static bool is_device_only(const H&) { return std::is_same<H, DeviceOnly>::value; }
  template <class T>
  static size_t lane_item_bytes(const LaneArray<T>&) { return sizeof(T); }
  template <class P>
  static size_t lane_item_bytes(const P&) { return 0; }
  template <class T>
  static void place(T*& field, void* at, uint32_t) { field = (T*)at; }
  template <class T>
  static void place(LaneArray<T>& field, void* at, uint32_t lanes) { field = LaneArray<T>{(uint32_t*)at, lanes}; }
  static void place(NoField&, void*, uint32_t) {}

  // The host's lane arrays: one struct after another (lanes = 1).
  template <class T>
  static LaneArray<T> lanes_of(std::vector<T>& v) {
    return LaneArray<T>{reinterpret_cast<uint32_t*>(v.data()), 1};
  }

  std::vector<uint8_t> image_;
  std::vector<uint16_t> code_maps_;  // CodeMap's, for the host's frame loop (the launch shim's too)
  RomSettings settings_;
  const MapperOps* ops_;
  int n_;
  bool pal_ = false;
  RomView rom_{};
  EnvConfig config_{};
  Machine power_on_{};
  std::vector<uint32_t> rng_draws_;
  std::vector<Machine> machines_;
  std::vector<EnvState> envs_;
  std::vector<Mt19937> rngs_;
  std::vector<Machine> saved_machines_;  // VectorEnv::step's snapshots
  std::vector<EnvState> saved_envs_;
  std::vector<Mt19937> saved_rngs_;
  std::vector<uint8_t> buffers_;
  std::unique_ptr<ThreadPool> pool_;
  // the vector pipeline (configure_vector)
  VectorOptions opt_{};
  bool configured_ = false;  // configure_vector has run
  uint8_t palette_rgb_[256 * 3] = {};
  uint8_t palette_gray_[256] = {};
  std::vector<AreaTap> taps_;
  ResizePlan plan_{};
  uint32_t raw_bytes_ = 0, obs_bytes_ = 0, scratch_floats_ = 0;
  std::vector<float> scratch_;
  std::vector<uint8_t> memo_;
  std::vector<uint8_t> raw_, stacks_, final_;
  std::vector<int32_t> stack_index_;
  std::vector<VectorState> vstates_;
  std::vector<EnvResult> results_;
  std::vector<Machine> cache_machines_;
  std::vector<EnvState> cache_envs_;
  std::vector<uint8_t> cache_screens_, cache_frames_;
  uint32_t log_frames_ = 0, log_accesses_ = 0;  // render log room per environment (device batches)
};

using Emulator = BasicEmulator<Games>;

// Several batches' environments as one job on one pool (a batch of many
// games, one Emulator each), or on this thread when there is none: threads
// claim environments of whichever batch has some left, so games of unequal
// cost still keep every thread busy. Steps and the copies of their results
// both go this way.
template <class Run>
void run_batches(ThreadPool* pool, const std::vector<Run>& runs, const std::vector<int>& counts) {
  std::vector<std::pair<int, int>> tasks;  // (batch, index in its call)
  for (size_t k = 0; k < runs.size(); ++k)
    for (int i = 0; i < counts[k]; ++i) tasks.emplace_back((int)k, i);
  const auto job = [&](int t) { runs[tasks[t].first](tasks[t].second); };
  if (pool) {
    pool->run((int)tasks.size(), job);
  } else {
    for (int t = 0; t < (int)tasks.size(); ++t) job(t);
  }
}

}  // namespace cule
