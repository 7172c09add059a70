// ale-py's vector env for one environment (vector/preprocessed_env.cpp and
// EnvVectorizer::execute_env), over a batch laid out as flat arrays. Host and
// device: the CPU backend runs VectorEnv::run on its threads, the CUDA
// kernels (cule/kernels/) one thread per environment, on the same BatchView.
#pragma once

#include "common.hpp"
#include "console/console.hpp"
#include "ale/environment.hpp"
#include "ale/mt19937.hpp"
#include "preprocess.hpp"
#include "chips/render_log.hpp"

namespace cule {

// ale-py AtariVectorEnv's preprocessing arguments (plus cule's mode choice).
struct VectorOptions {
#define CULE_OPTION(type, name, value, meaning) type name = value;
#include "vector_options.inc"
#undef CULE_OPTION
};

// PreprocessedEnv's per-environment fields beside EnvState's.
struct VectorState {
  Mt19937 noop_rng;  // std::mt19937 seeded with the reset seed
  int32_t reward;
  uint8_t game_over, truncated, life_lost;
};

// Every per-environment output of a step besides the observations:
// X(type, output name, element type as numpy sees it, EnvResult field).
// EnvResult, StepOutputs, cule_gather's parameters, Emulator.gather's
// keywords and cule._core.step_outputs (the backends' outputs) expand it.
#define CULE_STEP_OUTPUTS(X)                                \
  X(int32_t, rewards, int32_t, reward)                      \
  X(uint8_t, terminated, bool, terminated)                  \
  X(uint8_t, truncated, bool, truncated)                    \
  X(int32_t, lives, int32_t, lives)                         \
  X(int32_t, frame_number, int32_t, frame_number)           \
  X(int32_t, episode_frame_number, int32_t, episode_frame_number)

// What EnvVectorizer reports for one environment.
struct EnvResult {
#define CULE_RESULT_FIELD(type, name, element, field) type field;
  CULE_STEP_OUTPUTS(CULE_RESULT_FIELD)
#undef CULE_RESULT_FIELD
};

// Where a gather writes: one array per output, batch position i at [i];
// observations stacked, oldest first; final_obs (SameStep) or null.
struct StepOutputs {
  uint8_t* obs;
#define CULE_OUTPUT_ARRAY(type, name, element, field) type* name;
  CULE_STEP_OUTPUTS(CULE_OUTPUT_ARRAY)
#undef CULE_OUTPUT_ARRAY
  uint8_t* final_obs;
};

// The step policies: how a step goes and when an episode ends, as ale-py's
// vector env or gymnasium's AtariEnv (cule.make) has it. A batch steps all
// its environments under one policy, as it runs one mapper, and a step's
// code is compiled for it (AleEnv::vector_step and VectorEnv's run, step and
// end_episode take it as a template argument). The CUDA backend builds its
// kernels for the batch's policy (kernels.cu, CULE_STEP); the CPU backend
// and the launch shim read the `gymnasium` option once per batch step
// (with_step_policy). No environment tests the option.
//
// ale-py's vector env: PreprocessedEnv::step, is_episode_over, write_to.
struct VectorEnvStep {
  // The frameskip loop stops when the episode ends inside it (game over, the
  // step limit max_episode_steps, a lost life with episodic_life); the
  // observation is made of the last two frames the loop reached.
  static constexpr bool kStopsAtEpisodeEnd = true;
  // The frames a step shows are frames it emulated: the CUDA backend may
  // record them and leave their drawing to cule_render.
  static constexpr bool kRecords = true;

  CULE_HD static bool episode_over(const VectorState& v, const EnvState& s, const VectorOptions& o) {
    return v.game_over || s.elapsed_steps >= o.max_episode_steps || (o.episodic_life && v.life_lost);
  }
  // The step's terminated and truncated outputs.
  CULE_HD static void end_flags(const VectorState& v, const EnvState& s, const VectorOptions& o, EnvResult& r) {
    r.terminated = v.game_over || ((o.life_loss_info || o.episodic_life) && v.life_lost);
    r.truncated = s.elapsed_steps >= o.max_episode_steps && !r.terminated;
  }
};

// gymnasium's AtariEnv.step: ALE's game over and frame limit end an episode,
// nothing else.
struct GymnasiumStep {
  // All `frameskip` acts run, and the observation is the last frame ALE
  // emulated: when the game ended inside the step, that frame came before
  // the step's last and was not drawn, so the step runs again drawing all.
  static constexpr bool kStopsAtEpisodeEnd = false;
  // The frame shown may be from before the step: drawn inline.
  static constexpr bool kRecords = false;

  CULE_HD static bool episode_over(const VectorState& v, const EnvState&, const VectorOptions&) {
    return v.game_over || v.truncated;
  }
  CULE_HD static void end_flags(const VectorState& v, const EnvState&, const VectorOptions&, EnvResult& r) {
    r.terminated = v.game_over;
    r.truncated = v.truncated;
  }
};

// The policies by the value of the `gymnasium` option that selects them, as
// a build that compiles one in names it (cule._core.step_policies).
#define CULE_STEP_POLICIES(X) X(false, VectorEnvStep) X(true, GymnasiumStep)

// The policy the `gymnasium` option names, handed to f as an empty value:
// f(GymnasiumStep{}) or f(VectorEnvStep{}). The one place the option is read.
template <class F>
CULE_HD void with_step_policy(const VectorOptions& o, F&& f) {
  if (o.gymnasium) {
    f(GymnasiumStep{});
  } else {
    f(VectorEnvStep{});
  }
}

// std::uniform_int_distribution<int>(0, range - 1) over std::mt19937 as
// libstdc++ (GCC 11+) draws it: Lemire's multiply-shift with rejection.
CULE_HD uint32_t uniform_below(const MtStream& g, uint32_t range) {
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

// reset_mode "cache" (CuLE): start states, `count` of each.
struct StartStates {
  const Machine* machines;
  const EnvState* envs;
  const uint8_t* screens;       // [count][2][frame_bytes] TIA buffers
  const uint8_t* first_frames;  // [count][raw_bytes] the processed reset frame
  int32_t count;
};

// A batch: what every environment shares, and per-environment arrays indexed
// by environment. Plain data with pointers, so the CUDA backend copies it to
// the device as it is. The consoles and ALE states, the state a step works
// on most, are lane arrays (common.hpp), laid out for coalescing on devices.
struct BatchView {
  RomView rom;
  EnvConfig cfg;
  VectorOptions opt;
  ResizePlan plan;
  const Machine* power_on;      // the console after power-on, for loadROM
  const uint8_t* palette_rgb;   // [256][3]
  const uint8_t* palette_gray;  // [256]
  StartStates cache;
  LaneArray<Machine> machines;
  LaneArray<EnvState> envs;
  LaneArray<Mt19937> rngs;  // the environment RNGs (sticky actions), drawn in place
  VectorState* vstates;
  EnvResult* results;
  uint8_t* buffers;        // [N][2][frame_bytes] TIA frames, palette indices
  uint8_t* raw;            // [N][2][raw_bytes] the two captured frames, processed
  uint8_t* stacks;         // [N][stack_num][obs_bytes] ring of observations
  int32_t* stack_index;    // [N] the ring's next slot
  uint8_t* final_stacks;   // [N][stack_num][obs_bytes] SameStep's last observations, or null
  float* scratch;          // [N][scratch_floats] the resize's two rows (a thread's stack could not hold them)
  uint8_t* resize_memo;    // [N][resize_memo_bytes(plan)] the host's resize memo (resize_memoized), or null
  // [N] room for a step's snapshot: in global memory, a kernel thread would
  // otherwise hold 3 KB more of copies in local memory.
  LaneArray<Machine> saved_machines;
  LaneArray<EnvState> saved_envs;
  LaneArray<Mt19937> saved_rngs;  // the index, and the words only when the step may regenerate them
  uint32_t frame_bytes, raw_bytes, obs_bytes, scratch_floats;
  // The CUDA backend's render pass (render_log.hpp): steps record their
  // frames here and cule_render draws them. Null on the CPU backend, whose
  // steps draw as they go.
  RenderLog* logs;            // [N]
  FrameRecord* log_frames;    // [N][log_frame_capacity]
  TiaAccess* log_accesses;    // [N][log_access_capacity] in lane layout
  uint32_t log_frame_capacity, log_access_capacity;
  uint32_t lanes;  // the lane arrays' layout (common.hpp): 1 on the CPU backend
  // Device batches: environments whose episode ended, left to cule_reset
  // (reset_count counts them; zeroed before each step), as references
  // (env_ref). Batches launched together share one list. Null on the CPU
  // backend, whose resets run in place.
  int32_t* reset_list;   // [N]
  int32_t* reset_count;  // [1]
  int32_t ref_base;      // this batch's index among those launched together, in a reference's place (env_ref)
};

// The step kernels run over one batch, or over several launched together (a
// mixed batch's games of one mapper: one launch each, not one per game),
// given as an array of BatchViews. They name an environment by a reference:
// its batch's index in the bits from kRefEnvBits up, its index in that batch
// below. A lone batch's references are its indices.
constexpr int kRefEnvBits = 24;
constexpr int kMaxRefBatches = 1 << (31 - kRefEnvBits);
CULE_HD int32_t env_ref(int batch, int env) { return (int32_t)((uint32_t)batch << kRefEnvBits) | env; }
CULE_HD int ref_batch(int32_t ref) { return ref >> kRefEnvBits; }
CULE_HD int ref_env(int32_t ref) { return ref & ((1 << kRefEnvBits) - 1); }

// The pixel side of one environment: its TIA buffers, captured frames and
// observation stack. It needs no console state, so cule_render and
// cule_gather use it alone.
struct EnvFrames {
  const BatchView& b;
  int env;

  CULE_HD uint8_t* buffers() const { return b.buffers + (size_t)env * 2 * b.frame_bytes; }
  CULE_HD uint8_t* raw(int k) const { return b.raw + ((size_t)env * 2 + k) * b.raw_bytes; }
  CULE_HD uint32_t stacked_bytes() const { return (uint32_t)b.opt.stack_num * b.obs_bytes; }
  CULE_HD uint8_t* stack() const { return b.stacks + (size_t)env * stacked_bytes(); }
  CULE_HD FrameRecorder recorder() const {
    return FrameRecorder{b.logs + env, b.log_frames + (size_t)env * b.log_frame_capacity,
                         AccessSlice{b.log_accesses + lane_slot(env, 0, b.log_access_capacity, b.lanes), b.lanes},
                         b.log_frame_capacity, b.log_access_capacity};
  }
  CULE_HD void palette(const uint8_t* indices, uint8_t* out) const {
    preprocess::apply_palette(indices, (int)b.frame_bytes, kScreenWidth, b.opt.grayscale, b.palette_gray, b.palette_rgb,
                              out);
  }

  // A step's captured frames into raw(1) and raw(0). The newest frame comes
  // last (k = 0); pooling it with the one before as it is converted saves
  // process_screen a pass. With a recorder the frame is not drawn yet: the
  // capture is noted on its record, and render() makes it after the replay.
  struct Captures {
    const EnvFrames& v;
    FrameRecorder* recorder;
    bool pooled = false, have_before = false;
#if !CULE_DEVICE_CODE
    // The TIA buffer raw(1) was made from (the host's pooling compares rows
    // with it). Frames alternate buffers, so it still holds those indices
    // when the next frame is captured from the other one.
    const uint8_t* before_indices = nullptr;
#endif

    CULE_HD void operator()(int k, const uint8_t* indices) {
      if (recorder) {
        if (FrameRecord* r = recorder->current()) r->captures |= (uint8_t)(1u << k);
        return;
      }
      const BatchView& b = v.b;
      if (k == 0 && b.opt.maxpool && have_before) {
#if !CULE_DEVICE_CODE
        const uint8_t* earlier = before_indices != indices ? before_indices : nullptr;
#else
        const uint8_t* earlier = nullptr;
#endif
        preprocess::apply_palette_max(indices, (int)b.frame_bytes, kScreenWidth, b.opt.grayscale, b.palette_gray,
                                      b.palette_rgb, v.raw(1), v.raw(0), earlier);
        pooled = true;
      } else {
        v.palette(indices, v.raw(k));
        have_before = have_before || k == 1;
#if !CULE_DEVICE_CODE
        if (k == 1) before_indices = indices;
#endif
      }
    }
    // The step runs again: it captures the same frames again, superseding
    // these (the frames stay recorded: their pixels may show through rows a
    // short frame does not reach).
    CULE_HD void restart() {
      pooled = have_before = false;
#if !CULE_DEVICE_CODE
      before_indices = nullptr;
#endif
      if (recorder)
        for (uint32_t f = 0; f < recorder->log->frames; ++f) recorder->frames[f].captures = 0;
    }
  };

  // cule_render: draws the frames the last step recorded, then makes its
  // captures and processes the screen as step() would have.
  CULE_PHASE void render() {
    RenderLog& log = b.logs[env];
    if (!log.pending) return;
    log.pending = 0;
    const FrameRecorder rec = recorder();
    Captures capture{*this, nullptr};
    for (uint32_t f = 0; f < log.frames; ++f) {
      const FrameRecord& r = rec.frames[f];
      const uint8_t* screen = tia::replay(r, rec.accesses, buffers(), b.frame_bytes);
      for (int k = 0; k < 2; ++k)
        if (r.captures & (1u << k)) capture(k, screen);
    }
    process_screen(capture.pooled);
  }

  // PreprocessedEnv::process_screen: max-pool into the newest raw frame
  // (unless the capture did), resize into the stack's next slot.
  CULE_PHASE void process_screen(bool pooled) {
    uint8_t* newest = raw(0);
    if (b.opt.maxpool && !pooled) preprocess::max_in_place(newest, raw(1), (int)b.raw_bytes);
    int32_t& slot = b.stack_index[env];
    uint8_t* out = stack() + (size_t)slot * b.obs_bytes;
    float* scratch = b.scratch + (size_t)env * b.scratch_floats;
#if !CULE_DEVICE_CODE
    if (b.resize_memo)
      preprocess::resize_memoized(b.plan, newest, out, scratch,
                                  b.resize_memo + env * preprocess::resize_memo_bytes(b.plan));
    else
#endif
      preprocess::resize(b.plan, newest, out, scratch);
    slot = (slot + 1) % b.opt.stack_num;
  }

  // The ring as a stack, oldest frame first.
  CULE_HD void linearize(uint8_t* out) const {
    const uint8_t* ring = stack();
    const int32_t next = b.stack_index[env];
    for (int i = 0; i < b.opt.stack_num; ++i) {
      const uint8_t* from = ring + (size_t)((next + i) % b.opt.stack_num) * b.obs_bytes;
      uint8_t* to = out + (size_t)i * b.obs_bytes;
#if !CULE_DEVICE_CODE
      // One block copy: a byte loop would read b.obs_bytes again after every
      // byte, since a byte store may alias it.
      __builtin_memcpy(to, from, b.obs_bytes);
#else
      for (uint32_t j = 0; j < b.obs_bytes; ++j) to[j] = from[j];
#endif
    }
  }

  // One environment's latest result into batch position `i` of the outputs.
  CULE_HD void gather(int i, const StepOutputs& out) const {
    const EnvResult& r = b.results[env];
    const size_t bytes = stacked_bytes();
    linearize(out.obs + i * bytes);
#define CULE_COPY_OUTPUT(type, name, element, field) out.name[i] = r.field;
    CULE_STEP_OUTPUTS(CULE_COPY_OUTPUT)
#undef CULE_COPY_OUTPUT
    if (out.final_obs) {
      uint8_t* to = out.final_obs + i * bytes;
      const uint8_t* from = b.final_stacks && (r.terminated || r.truncated) ? b.final_stacks + (size_t)env * bytes
                                                                            : nullptr;
      for (size_t j = 0; j < bytes; ++j) to[j] = from ? from[j] : 0;
    }
  }
};

// The state side of one environment: ALE and the vector env's steps and
// resets over working copies of its console and ALE state (EnvCopy).
template <class Cart, class Games>
struct VectorEnv : EnvFrames {
  Machine& m;
  EnvState& s;

  CULE_HD VectorState& vstate() const { return b.vstates[env]; }
  CULE_HD MtStream rng() const { return MtStream{b.rngs.item(env), b.rngs.lanes}; }
  CULE_HD MtStream saved_rng() const { return MtStream{b.saved_rngs.item(env), b.saved_rngs.lanes}; }
  CULE_HD MtStream noop_rng() const { return stream_of(vstate().noop_rng); }
  CULE_HD AleEnv<Cart, Games> ale(bool draw) const {
    return AleEnv<Cart, Games>{m, s, rng(), b.rom, b.cfg, draw ? buffers() : nullptr};
  }
  CULE_HD const uint8_t* screen() const { return buffers() + (size_t)m.tia.current_buffer * b.frame_bytes; }
  CULE_HD int lives() const { return Games::lives(b.cfg.game, s.game); }
  CULE_HD bool game_over() const { return ale(false).game_over(); }

  // ALE's loadROM: a freshly built console, the environment RNG seeded, the
  // mode and difficulty stored, then reset_game.
  CULE_PHASE void load(uint32_t seed, int mode, int difficulty) {
    m = *b.power_on;
    uint8_t* frames = buffers();
    for (uint32_t i = 0; i < 2 * b.frame_bytes; ++i) frames[i] = 0;
    s = EnvState{};
    rng().seed(seed);
    s.ale.mode = (uint16_t)mode;
    s.ale.difficulty = (uint8_t)difficulty;
    s.action_a = kNoop;
    s.action_b = kPlayerBNoop;
    reset_game();
  }
  // ALE's setMode / setDifficulty: stored, applied by the next reset_game.
  CULE_HD void set_mode(int mode, int difficulty) {
    s.ale.mode = (uint16_t)mode;
    s.ale.difficulty = (uint8_t)difficulty;
  }
  CULE_HD void reset_game() { ale(true).reset_game(); }
  CULE_HD int act(int action_a, int action_b, bool draw = true) { return ale(draw).act(action_a, action_b); }

  // ALE's reset_game, FIRE when asked for, then `noops` - FIRE NOOPs (a game
  // that ends during them is reset again).
  CULE_PHASE void ale_reset(int noops) {
    reset_game();
    const bool fire = b.opt.fire_reset && b.opt.has_fire;
    if (fire) act(kFire, kPlayerBNoop);
    for (noops -= (int)fire; noops > 0; --noops) {
      act(kNoop, kPlayerBNoop);
      if (game_over()) reset_game();
    }
  }

  // A start state from the cache, picked with the no-op RNG; the environment
  // keeps its sticky-action RNG and its frame counter (advanced by the start
  // state's frames).
  CULE_PHASE void cached_reset() {
    const int k = (int)uniform_below(noop_rng(), (uint32_t)b.cache.count);
    const int32_t frames = s.frame_number;
    m = b.cache.machines[k];
    s = b.cache.envs[k];
    s.frame_number = frames + b.cache.envs[k].episode_frame_number;
    const uint8_t* screens = b.cache.screens + (size_t)k * 2 * b.frame_bytes;
    uint8_t* frames_out = buffers();
    for (uint32_t i = 0; i < 2 * b.frame_bytes; ++i) frames_out[i] = screens[i];
    const uint8_t* first = b.cache.first_frames + (size_t)k * b.raw_bytes;
    uint8_t* newest = raw(0);
    for (uint32_t i = 0; i < b.raw_bytes; ++i) newest[i] = first[i];
  }

  // PreprocessedEnv::reset: a seed >= 0 powers the console on again
  // (setInt("random_seed"), loadROM) and reseeds the no-op RNG; then
  // reset_game, FIRE, a random number of NOOPs (or a cached start state),
  // and a fresh stack.
  CULE_PHASE void reset(int64_t seed) {
    VectorState& v = vstate();
    if (seed >= 0) {
      load((uint32_t)seed, b.opt.default_mode, 0);
      set_mode(b.opt.mode, b.opt.difficulty);
      noop_rng().seed((uint32_t)seed);
    }
    if (b.cache.count > 0) {
      cached_reset();
    } else {
      ale_reset((int)uniform_below(noop_rng(), b.opt.noop_max > 0 ? (uint32_t)b.opt.noop_max : 1u));
      palette(screen(), raw(0));
    }
    uint8_t* before = raw(1);
    for (uint32_t i = 0; i < b.raw_bytes; ++i) before[i] = 0;
    uint8_t* ring = stack();
    for (uint32_t i = 0; i < stacked_bytes(); ++i) ring[i] = 0;
    b.stack_index[env] = 0;
    process_screen(false);
    s.elapsed_steps = 0;
    s.lives = lives();
    v.reward = 0;
    v.game_over = v.truncated = v.life_lost = 0;
  }

  // PreprocessedEnv::step. Frames are drawn only when captured; if a step
  // turns out to contain a frame that ended above the window's last line
  // (whose missing rows ALE fills with an older frame's), the step is run
  // again drawing every frame, and an environment where that happens twice
  // draws every frame from then on. With a render log (the CUDA backend) the
  // frames are recorded instead, and cule_render draws and processes them;
  // a step that does not fit the log runs again drawing as it goes.
  template <class Step>
  CULE_PHASE void step(int action) {
    b.saved_machines.store(env, m);
    b.saved_envs.store(env, s);
    // The RNG's words change only when a draw regenerates them, once in 312
    // frames: otherwise its index is all the snapshot needs.
    const bool rng_whole = rng().twists_within((uint32_t)(kDrawsPerAct * b.opt.frameskip));
    rng().copy_to(saved_rng(), rng_whole);
    const int32_t short_frames_before = s.short_frames;
    const bool draw_all_before = s.draw_all;
    auto restore = [&] {
      b.saved_machines.load(env, m);
      b.saved_envs.load(env, s);
      saved_rng().copy_to(rng(), rng_whole);
    };
    const VectorOptions& o = b.opt;
    FrameRecorder rec = recorder();
    AleEnv<Cart, Games> e = ale(true);
    e.recorder = b.logs && Step::kRecords ? &rec : nullptr;
    if (e.recorder) rec.clear();
    Captures capture{*this, e.recorder};
    bool over, trunc, lost, again = false, short_first = false;
    int reward;
    for (;;) {
      reward = e.template vector_step<Step>(action, o.frameskip, o.max_episode_steps, o.episodic_life, capture, over,
                                            trunc, lost);
      if (e.recorder && rec.log->overflow) {  // from the start, drawing
        e.recorder = capture.recorder = nullptr;
        capture.restart();
        restore();
        again = false;
        continue;
      }
      if (again) break;
      const bool short_frame = s.short_frames != short_frames_before;
      // Without the early stop the step shows the last frame ALE emulated,
      // which is not the step's last when the episode ended inside it.
      const bool ended_early = !Step::kStopsAtEpisodeEnd && (over || trunc);
      if (draw_all_before || !(short_frame || ended_early)) break;
      again = true;
      short_first = short_frame;
      capture.restart();
      restore();
      s.draw_all = 1;
    }
    if (again) {
      // One short frame is usually a game restarting; a second means the
      // game draws short frames, so draw them all from now on.
      if (short_first) ++s.short_steps;
      s.draw_all = s.short_steps >= 2;
    }
    VectorState& v = vstate();
    v.reward = o.reward_clipping ? (reward > 1 ? 1 : reward < -1 ? -1 : reward) : reward;
    v.game_over = over;
    v.truncated = trunc;
    v.life_lost = lost;
    if (e.recorder) {
      rec.log->pending = 1;
      ++rec.log->replayed_steps;
      if (rec.log->accesses > rec.log->peak_accesses) rec.log->peak_accesses = rec.log->accesses;
      return;
    }
    if (b.logs) ++b.logs[env].inline_steps;
    process_screen(capture.pooled);
  }

  // PreprocessedEnv::is_episode_over.
  template <class Step>
  CULE_HD bool episode_over() const {
    return Step::episode_over(vstate(), s, b.opt);
  }

  // PreprocessedEnv::write_to, minus the stack (gather linearizes it).
  template <class Step>
  CULE_HD void write_result() const {
    const VectorState& v = vstate();
    EnvResult& r = b.results[env];
    r.reward = v.reward;
    Step::end_flags(v, s, b.opt, r);
    r.lives = s.lives;
    r.frame_number = s.frame_number;
    r.episode_frame_number = s.episode_frame_number;
  }

  // EnvVectorizer::execute_env: a forced reset (with `seed`), or a step
  // with `action` (NextStep: a reset if the episode is over; SameStep: a
  // reset right after a step that ended it). With a reset list (the CUDA
  // backend) an episode's reset is left to cule_reset: the environment is
  // appended to the list, and the resets run packed together in warps of
  // their own instead of stalling the warps of stepping environments.
  template <class Step>
  CULE_PHASE void run(int action, int64_t seed, bool force_reset) {
    if (force_reset) {
      reset(seed);
      write_result<Step>();
      return;
    }
    const bool stepping = b.opt.same_step || !episode_over<Step>();
    if (stepping) {
      step<Step>(action);
      write_result<Step>();
      if (!b.opt.same_step || !episode_over<Step>()) return;
    }
    if (b.reset_list) {
      b.reset_list[claim_slot(b.reset_count)] = b.ref_base | env;
    } else {
      if (b.logs) render();  // SameStep keeps the step's stack: draw it first
      end_episode<Step>();
    }
  }

  // The reset after an episode (NextStep: in place of a step; SameStep:
  // after the step that ended it, keeping its reward and flags and its last
  // stack as final_obs).
  template <class Step>
  CULE_PHASE void end_episode() {
    if (!b.opt.same_step) {
      reset(-1);
      write_result<Step>();
      return;
    }
    linearize(b.final_stacks + (size_t)env * stacked_bytes());
    const EnvResult ended = b.results[env];
    reset(-1);
    write_result<Step>();
    b.results[env].reward = ended.reward;
    b.results[env].terminated = ended.terminated;
    b.results[env].truncated = ended.truncated;
  }
};

// One environment's console and ALE state checked out of the batch's lane
// arrays into working copies, and written back when it goes out of scope.
// The console goes into `slot`, which the caller places: a local on the
// host, the thread's slot of its block's shared memory on the device
// (kernels.cu), so the instruction loop's RAM, TIA and RIOT accesses stay on
// chip. The ALE state (about 100 bytes) is a local; the environment RNG stays
// in its lane array, where a frame draws two words.
template <class Cart, class Games>
struct EnvCopy {
  const BatchView& b;
  const int env;
  Machine& m;
  EnvState s;

  CULE_HD EnvCopy(const BatchView& batch, int id, Machine& slot) : b(batch), env(id), m(slot) {
    b.machines.load(env, m);
    b.envs.load(env, s);
  }
  CULE_HD ~EnvCopy() {
    b.machines.store(env, m);
    b.envs.store(env, s);
  }
  EnvCopy(const EnvCopy&) = delete;
  EnvCopy& operator=(const EnvCopy&) = delete;
  CULE_HD VectorEnv<Cart, Games> operator*() { return VectorEnv<Cart, Games>{{b, env}, m, s}; }
};

// A console's slot in a block's shared memory: padded to an odd number of
// 4-byte words, so that the threads of a warp reading the same field of
// their consoles hit 32 different banks.
struct MachineSlot {
  Machine m;
  uint32_t pad_[(sizeof(Machine) / 4) % 2 == 0 ? 1 : 2];
};
static_assert(sizeof(Machine) % 4 == 0 && alignof(Machine) <= 4, "consoles are whole 4-byte words");
static_assert((sizeof(MachineSlot) / 4) % 2 == 1, "an odd word stride between shared-memory slots");

}  // namespace cule
