// cule._core.Emulator: the CPU backend's batch of environments.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "emulator.hpp"
#include "field_views.hpp"

namespace cule::bindings {

// The TIA's nested structs as dicts (outside the anonymous namespace, which
// would hide field_views.hpp's overloads from the views below).
py::object field_value(const cule::TiaConfig& c) { return CULE_FIELDS_DICT(CULE_TIA_CONFIG_FIELDS, c); }
py::object field_value(const cule::ObjectMask& m) { return CULE_FIELDS_DICT(CULE_OBJECT_MASK_FIELDS, m); }

namespace {

using Ids = py::array_t<int32_t, py::array::c_style>;
using Bytes = py::array_t<uint8_t, py::array::c_style>;
using EmulatorClass = py::class_<cule::Emulator>;

std::unique_ptr<cule::Emulator> make_emulator(py::bytes image, const std::string& cart, const std::string& game,
                                              int num_envs, int ystart, int height, bool hmove_blanks,
                                              const std::string& format, bool left_paddles, bool right_paddles,
                                              bool swap_ports, bool swap_paddles, int initial_switches,
                                              float repeat_action_probability, int max_num_frames_per_episode) {
  cule::RomSettings s;
  s.cart = cart_type_of(cart);
  s.ystart = (uint16_t)ystart;
  s.height = (uint16_t)height;
  s.hmove_blanks = hmove_blanks;
  if (format != "AUTO-DETECT" && format != "PAL" && format != "NTSC")
    throw std::invalid_argument("format must be AUTO-DETECT, PAL or NTSC");
  s.detect_format = format == "AUTO-DETECT";
  s.fixed_pal = format == "PAL";
  s.initial_switches = (uint8_t)initial_switches;
  s.controllers = cule::ControllerSetup{(uint8_t)left_paddles, (uint8_t)right_paddles, (uint8_t)swap_ports,
                                        (uint8_t)swap_paddles, 0, 0};
  int id = -1;
  for (int i = 0; i < (int)cule::GameId::kCount; ++i)
    if (game == cule::kGameNames[i]) id = i;
  if (id < 0) throw std::invalid_argument("no game settings for '" + game + "'");
  std::string bytes = image;
  return std::make_unique<cule::Emulator>(std::vector<uint8_t>(bytes.begin(), bytes.end()), s, id, num_envs,
                                          repeat_action_probability, max_num_frames_per_episode);
}

// save_states / load_states: rows [count, row_bytes] for `ids`; a save returns the rows' digests. The rows
// must be the caller's own uint8 C-contiguous array (a save into a converted copy would be lost).
py::object state_rows(cule::Emulator& e, const Ids& ids, py::array rows, size_t offset, bool with_rng, bool save) {
  if (!rows.dtype().is(py::dtype::of<uint8_t>()) || !(rows.flags() & py::array::c_style) || !rows.writeable())
    throw std::invalid_argument("rows must be a writable, C-contiguous uint8 array");
  if (ids.ndim() != 1 || rows.ndim() != 2 || rows.shape(0) != ids.shape(0))
    throw std::invalid_argument("rows (uint8) need shape [count, row_bytes], one row per listed environment");
  uint8_t* data = static_cast<uint8_t*>(rows.mutable_data());
  const size_t row_bytes = (size_t)rows.shape(1);
  if (!save) {
    {
      py::gil_scoped_release release;
      e.load_states(ids.data(), (int)ids.size(), data, row_bytes, offset, with_rng);
    }
    return py::none();
  }
  py::array_t<uint64_t> digests(ids.size());
  uint64_t* out = digests.mutable_data();
  {
    py::gil_scoped_release release;
    e.save_states(ids.data(), (int)ids.size(), data, row_bytes, offset, with_rng, out);
  }
  return std::move(digests);
}

using Digests = std::optional<py::array_t<uint64_t, py::array::c_style | py::array::forcecast>>;

// check_states: each row's first fault (0: none), reading the rows only.
py::array_t<int32_t> check_states(cule::Emulator& e, py::array_t<uint8_t, py::array::c_style> rows, size_t offset,
                                  bool with_rng, Digests digests) {
  if (rows.ndim() != 2) throw std::invalid_argument("rows (uint8) need shape [count, row_bytes]");
  const int count = (int)rows.shape(0);
  if (digests && (digests->ndim() != 1 || digests->shape(0) != count))
    throw std::invalid_argument("digests (uint64) need one entry per row");
  py::array_t<int32_t> faults(count);
  int32_t* out = faults.mutable_data();
  const uint8_t* data = rows.data();
  const uint64_t* expected = digests ? digests->data() : nullptr;
  {
    py::gil_scoped_release release;
    e.check_states(data, count, (size_t)rows.shape(1), offset, with_rng, expected, out);
  }
  return faults;
}


void configure_vector(cule::Emulator& e, Bytes rgb, Bytes gray, const py::kwargs& settings) {
  if (rgb.size() != 256 * 3 || gray.size() != 256)
    throw std::invalid_argument("palettes must be uint8 [256, 3] (RGB) and [256] (gray)");
  cule::VectorOptions o;
  size_t known = 0;
  // A value its field cannot hold is refused, not truncated.
  auto fit = [](const char* name, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi)
      throw py::value_error(std::string("configure_vector: ") + name + " = " + std::to_string(v) + " is outside [" +
                            std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
  };
#define CULE_OPTION(type, name, value, meaning)                                                               \
  if (settings.contains(#name))                                                                               \
    o.name = (type)fit(#name, settings[#name].cast<int64_t>(), (int64_t)std::numeric_limits<type>::min(),       \
                       (int64_t)std::numeric_limits<type>::max()),                                            \
    ++known;
#include "vector/vector_options.inc"
#undef CULE_OPTION
  if (known != settings.size())
    throw py::type_error("configure_vector: unknown setting among " + py::str(settings.attr("keys")()).cast<std::string>() +
                         "; the settings are cule._core.vector_options");
  e.configure_vector(o, rgb.data(), gray.data());
}

using Seeds = std::optional<py::array_t<int64_t, py::array::c_style>>;

// A run's arguments, checked; the arrays stay referenced while the GIL is released.
struct RunArgs {
  Ids ids, actions;
  Seeds seeds;
  RunArgs(Ids i, Ids a, Seeds s) : ids(std::move(i)), actions(std::move(a)), seeds(std::move(s)) {
    if (ids.ndim() != 1 || actions.ndim() != 1 || actions.shape(0) != ids.shape(0))
      throw std::invalid_argument("ids and actions (int32) need one entry per stepped environment");
    if (seeds && (seeds->ndim() != 1 || seeds->shape(0) != ids.shape(0)))
      throw std::invalid_argument("seeds (int64) need one entry per reset environment");
  }
  int count() const { return (int)ids.size(); }
  cule::Emulator::BatchRun prepare(cule::Emulator& e, bool force_reset) const {
    return e.prepare_run(ids.data(), count(), actions.data(), seeds ? seeds->data() : nullptr, force_reset);
  }
};

constexpr const char* POOL_STATS_DOC =
    "Where the pool's threads spent their time since it started or was cleared, as a dict: jobs, tasks, and "
    "nanoseconds summed over jobs: wall (each job's start to its return), capacity (threads x wall), and over "
    "each job's threads wake (job start to the thread starting on it), busy (working), cpu (CPU time while "
    "working), critical (job start to its last thread stopping). capacity = wake + busy + waiting for the "
    "slowest thread.";

py::dict pool_stats(const cule::ThreadPool& pool) {
  const cule::ThreadPool::Stats s = pool.stats();
  py::dict d;
  d["threads"] = pool.size();
  d["jobs"] = s.jobs;
  d["tasks"] = s.tasks;
  d["wall"] = s.wall;
  d["capacity"] = s.capacity;
  d["wake"] = s.wake;
  d["busy"] = s.busy;
  d["cpu"] = s.cpu;
  d["critical"] = s.critical;
  return d;
}

void vector_run(cule::Emulator& e, Ids ids, Ids actions, Seeds seeds, bool force_reset, int num_threads) {
  const RunArgs args(std::move(ids), std::move(actions), std::move(seeds));
  py::gil_scoped_release release;
  e.vector_run(args.ids.data(), args.count(), args.actions.data(), args.seeds ? args.seeds->data() : nullptr,
               force_reset, num_threads);
}

// Several emulators' environments (a batch of many games) stepped as one job on `pool`.
void run_batches(cule::ThreadPool& pool, const std::vector<cule::Emulator*>& emulators, std::vector<Ids> ids,
                 std::vector<Ids> actions, std::vector<Seeds> seeds, bool force_reset) {
  if (ids.size() != emulators.size() || actions.size() != emulators.size() || seeds.size() != emulators.size())
    throw std::invalid_argument("run_batches needs ids, actions and seeds for each emulator");
  std::vector<RunArgs> args;
  for (size_t k = 0; k < emulators.size(); ++k) args.emplace_back(ids[k], actions[k], seeds[k]);
  py::gil_scoped_release release;
  std::vector<cule::Emulator::BatchRun> runs;
  std::vector<int> counts;
  for (size_t k = 0; k < emulators.size(); ++k) {
    runs.push_back(args[k].prepare(*emulators[k], force_reset));
    counts.push_back(args[k].count());
  }
  cule::run_batches(&pool, runs, counts);
}

// A new C-order array whose data starts on a 64-byte boundary: what XLA's CPU client needs to take a buffer
// over through DLPack without a copy (cule.jax), and a whole cache line for each thread's first row.
constexpr size_t whole_lines(size_t bytes) { return (bytes + 63) / 64 * 64; }
template <typename T>
py::array_t<T> aligned_array(const std::vector<py::ssize_t>& shape) {
  size_t count = 1;
  for (py::ssize_t d : shape) count *= (size_t)d;
  const size_t bytes = std::max<size_t>(64, whole_lines(count * sizeof(T)));
  void* data = std::aligned_alloc(64, bytes);
  if (!data) throw std::bad_alloc();
  py::capsule owner(data, [](void* p) { std::free(p); });
  return py::array_t<T>(shape, static_cast<T*>(data), owner);
}

constexpr size_t kReleaseGilBytes = 1 << 20;  // observations a gather copies before it lets go of the GIL

// Results of environments `ids[k]` of `emulators[k]`, each at batch positions `positions[k]` (None: 0, 1, ...)
// of arrays made here: one call instead of an allocation per output from Python. The copies run on `pool`'s
// threads (null: this thread). `env_ids`, the batch's ids as the caller numbers them, comes back copied
// beside the small outputs: a copy made in torch (clone) cost as much as wrapping all six outputs.
py::tuple results_at(const std::vector<cule::Emulator*>& emulators, const std::vector<Ids>& ids,
                     const std::vector<std::optional<Ids>>& positions, const py::tuple& obs_shape, bool same_step,
                     cule::ThreadPool* pool, const std::optional<Ids>& env_ids) {
  size_t count = 0;
  for (size_t k = 0; k < emulators.size(); ++k) {
    if (ids[k].ndim() != 1 || (positions[k] && positions[k]->size() != ids[k].size()))
      throw std::invalid_argument("ids and positions (int32) need one entry per environment");
    count += (size_t)ids[k].size();
  }
  std::vector<py::ssize_t> shape{(py::ssize_t)count};
  size_t bytes = 1;
  for (const auto& d : obs_shape) shape.push_back(d.cast<py::ssize_t>()), bytes *= (size_t)shape.back();
  for (const cule::Emulator* e : emulators)
    if (bytes != e->stacked_bytes())
      throw std::invalid_argument("obs_shape holds " + std::to_string(bytes) + " bytes, an observation " +
                                  std::to_string(e->stacked_bytes()));
  for (const auto& p : positions)
    for (py::ssize_t i = 0; p && i < p->size(); ++i)
      if (p->data()[i] < 0 || (size_t)p->data()[i] >= count) throw std::out_of_range("a position is outside the batch");
  if (env_ids && (env_ids->ndim() != 1 || (size_t)env_ids->size() != count))
    throw std::invalid_argument("env_ids (int32) needs one entry per environment of the batch");
  py::array_t<uint8_t> obs = aligned_array<uint8_t>(shape);
  std::optional<py::array_t<uint8_t>> final_obs;
  if (same_step) final_obs.emplace(aligned_array<uint8_t>(shape));
  cule::StepOutputs out{};
  out.obs = obs.mutable_data();
  out.final_obs = final_obs ? final_obs->mutable_data() : nullptr;
  // The small outputs share one allocation, each at a 64-byte boundary: an allocation and a capsule per step
  // instead of one per output. The observations keep their own, so that keeping a step's rewards does not
  // keep its observations alive.
  size_t outputs_bytes = 0;
#define CULE_OUTPUT_BYTES(type, name, element, field) outputs_bytes += whole_lines(count * sizeof(element));
  CULE_STEP_OUTPUTS(CULE_OUTPUT_BYTES)
#undef CULE_OUTPUT_BYTES
  const size_t ids_at = outputs_bytes;
  if (env_ids) outputs_bytes += whole_lines(count * sizeof(int32_t));
  auto* block = static_cast<uint8_t*>(std::aligned_alloc(64, std::max<size_t>(64, outputs_bytes)));
  if (!block) throw std::bad_alloc();
  py::capsule owner(block, [](void* p) { std::free(p); });
  py::list arrays;
  size_t at = 0;
#define CULE_MAKE_OUTPUT(type, name, element, field)                                                     \
  {                                                                                                      \
    py::array_t<element> a({(py::ssize_t)count}, reinterpret_cast<element*>(block + at), owner);        \
    out.name = reinterpret_cast<type*>(block + at);                                                      \
    at += whole_lines(count * sizeof(element));                                                          \
    arrays.append(a);                                                                                    \
  }
  CULE_STEP_OUTPUTS(CULE_MAKE_OUTPUT)
#undef CULE_MAKE_OUTPUT
  py::object ids_copy = py::none();
  if (env_ids) {
    auto* copy = reinterpret_cast<int32_t*>(block + ids_at);
    std::copy(env_ids->data(), env_ids->data() + count, copy);
    ids_copy = py::array_t<int32_t>({(py::ssize_t)count}, copy, owner);
  }
  {
    // A small batch's copy takes about as long as handing the GIL over and back (a mutex, a condition
    // variable and thread-state swaps each way), so only a large one lets other Python threads run meanwhile.
    std::optional<py::gil_scoped_release> release;
    if (count * bytes >= kReleaseGilBytes) release.emplace();
    std::vector<cule::Emulator::BatchGather> gathers;
    std::vector<int> counts;
    for (size_t k = 0; k < emulators.size(); ++k) {
      counts.push_back((int)ids[k].size());
      gathers.push_back(emulators[k]->prepare_gather(ids[k].data(), counts.back(), out,
                                                     positions[k] ? positions[k]->data() : nullptr));
    }
    cule::run_batches(pool, gathers, counts);
  }
  // SameStep: final_obs on every step (zeros where no episode ended), as every backend gives it
  return py::make_tuple(obs, final_obs ? py::object(*final_obs) : py::none(), py::tuple(arrays), ids_copy);
}

// The debug views, generated from the structs' field lists (field_views.hpp).
py::dict tia_state(const cule::Emulator& e, int env) {
  return CULE_FIELDS_DICT(CULE_TIA_FIELDS, e.machine(env).tia);
}

py::dict debug_state(const cule::Emulator& e, int env) {
  const auto& m = e.machine(env);
  const auto& s = e.state(env);
  py::dict d;
  d["machine"] = CULE_FIELDS_DICT(CULE_MACHINE_FIELDS, m);
  d["cpu"] = CULE_FIELDS_DICT(CULE_CPU_FIELDS, m.cpu);
  d["riot"] = CULE_FIELDS_DICT(CULE_RIOT_FIELDS, m.riot);  // its RAM: Emulator.ram
  d["tia"] = tia_state(e, env);
  d["env"] = CULE_FIELDS_DICT(CULE_ENV_STATE_FIELDS, s);
  d["game"] = CULE_FIELDS_DICT(CULE_GAME_STATE_FIELDS, s.game);
  return d;
}

// The console: construction, the ALE interface's calls on one environment.
void bind_console(EmulatorClass& c) {
  c.def(py::init(&make_emulator), py::arg("image"), py::arg("cart"), py::arg("game"), py::arg("num_envs"),
        py::arg("ystart"), py::arg("height"), py::arg("hmove_blanks"), py::arg("format"),
        py::arg("left_paddles"), py::arg("right_paddles"), py::arg("swap_ports"), py::arg("swap_paddles"),
        py::arg("initial_switches"), py::arg("repeat_action_probability"),
        py::arg("max_num_frames_per_episode"))
      .def_property_readonly("num_envs", &cule::Emulator::num_envs)
      .def_property_readonly("is_pal", &cule::Emulator::is_pal)
      .def_property_readonly("screen_height", &cule::Emulator::screen_height)
      .def("load", &cule::Emulator::load, py::arg("env"), py::arg("seed"), py::arg("mode"), py::arg("difficulty"))
      .def("reset_game", &cule::Emulator::reset_game, py::arg("env"))
      .def("set_mode", &cule::Emulator::set_mode, py::arg("env"), py::arg("mode"), py::arg("difficulty"),
           "ALE's setMode/setDifficulty: applied by the next reset_game.")
      .def("act", &cule::Emulator::act, py::arg("env"), py::arg("action_a"), py::arg("action_b") = 18,
           py::arg("draw") = true)
      .def("use_ops", [](cule::Emulator& e, uintptr_t ops, const std::vector<uint64_t>& layout) {
        e.use_ops(reinterpret_cast<const cule::MapperOps*>(ops), layout);
      }, py::arg("ops"), py::arg("layout"),
           "Steps the game through the MapperOps at address `ops` (a translated core, cule.translate), "
           "checked against `layout`.")
      .def("code_maps", [](const cule::Emulator& e) {
        const auto& maps = e.code_maps();
        py::array_t<uint16_t> out((py::ssize_t)maps.size());
        std::copy(maps.begin(), maps.end(), out.mutable_data());
        return out;
      }, "The code maps of the image (cule/cpp/console/console.hpp CodeMap): per 4K block, the entry of each "
         "pc & 0x1FFF (an opcode, 256 outside the code window, or a TIA store's); empty for a mapper without.")
      .def("observe", [](const cule::Emulator& e) {
        py::array_t<uint8_t> screens({e.num_envs(), e.screen_height(), (int)cule::kScreenWidth});
        py::array_t<int32_t> lives(e.num_envs());
        e.observe(screens.mutable_data(), lives.mutable_data());
        return py::make_tuple(screens, lives);
      }, "(screens [N, H, 160] palette indices, lives [N])");
}

// The vector env's pipeline: its settings, batched steps and resets, the results.
void bind_vector(EmulatorClass& c) {
  c.def("configure_vector", &configure_vector, py::arg("rgb"), py::arg("gray"),
        "ale-py's PreprocessedEnv settings for every environment, as keywords named in cule._core.vector_options "
        "(defaults for those left out; see cule.AtariVectorEnv).")
      .def("vector_run", &vector_run, py::arg("ids"), py::arg("actions"), py::arg("seeds") = py::none(),
           py::arg("force_reset") = false, py::arg("num_threads") = 0,
           "Steps the listed environments with action words (ALE action ids; continuous actions add a paddle "
           "step above the id, cule.continuous), or resets them (force_reset=True).")
      .def("results", [](cule::Emulator& e, Ids ids, const py::tuple& obs_shape, bool same_step, bool threads) {
        return results_at({&e}, {ids}, {std::nullopt}, obs_shape, same_step, threads ? e.pool() : nullptr, ids);
      }, py::arg("ids"), py::arg("obs_shape"), py::arg("same_step"), py::arg("threads") = true,
           "The listed environments' latest results in fresh arrays: (obs [count, *obs_shape], final_obs (SameStep: "
           "zeros where no episode ended) or None, a tuple of one array per output of cule._core.step_outputs, "
           "a copy of ids). threads: copy them on the last run's threads (False while a run may be going on in the "
           "background).");
}

// Environment states: saved rows, restored, forked.
void bind_states(EmulatorClass& c) {
  c.def("state_bytes", &cule::Emulator::state_bytes, py::arg("with_rng"),
        "Bytes of one environment's state (cule/cpp/vector/state_rows.hpp), with or without the sticky-action RNG.")
      .def("state_layout", &cule::Emulator::state_layout, py::arg("with_rng"),
           "The parts of a state row in order, as (name, bytes): the console, ALE's state, the sticky-action RNG "
           "(with_rng), the vector env's state and results, the TIA buffers, the captures, the stack and its index, "
           "SameStep's final stack.")
      .def("save_states", [](cule::Emulator& e, Ids ids, py::array rows, size_t offset, bool with_rng) {
        return state_rows(e, ids, rows, offset, with_rng, true);
      }, py::arg("ids"), py::arg("rows"), py::arg("offset"), py::arg("with_rng"),
         "Copies the listed environments' states into rows [count, row_bytes], each from byte `offset` on; "
         "returns each row's digest (uint64 [count]: the sum of its payload's 32-bit words).")
      .def("load_states", [](cule::Emulator& e, Ids ids, py::array rows, size_t offset, bool with_rng) {
        state_rows(e, ids, rows, offset, with_rng, false);
      }, py::arg("ids"), py::arg("rows"), py::arg("offset"), py::arg("with_rng"),
         "Puts states saved by save_states back into the listed environments (each id once); refuses them all, "
         "loading none, if one fails check_states's field checks.")
      .def("check_states", &check_states, py::arg("rows"), py::arg("offset"), py::arg("with_rng"),
           py::arg("digests") = py::none(),
           "Each row's first fault (int32 [count]): 0 if it may be loaded, else 1 + its index in "
           "cule._core.state_faults; with digests (uint64 [count]) a row must also sum to its digest.")
      .def("copy_states", [](cule::Emulator& e, Ids src, Ids dst, bool with_rng) {
        if (src.ndim() != 1 || dst.ndim() != 1 || src.size() != dst.size())
          throw std::invalid_argument("src and dst (int32) need one entry per fork");
        e.copy_states(src.data(), dst.data(), (int)src.size(), with_rng);
      }, py::arg("src"), py::arg("dst"), py::arg("with_rng"), "Copies environment src[i]'s state onto dst[i].");
}

// What device backends build their copy of the batch from.
void bind_device_layout(EmulatorClass& c) {
  c.def_property_readonly("stacked_bytes", &cule::Emulator::stacked_bytes)
      .def_property_readonly("cart", [](const cule::Emulator& e) { return cart_name(e.cart()); })
      .def("arrays", [](py::object self) {
        auto& e = self.cast<cule::Emulator&>();
        py::dict out;
        for (const auto& a : e.arrays())
          out[a.name] = py::array_t<uint8_t>({(ssize_t)a.bytes}, {1}, (uint8_t*)a.data, self);
        return out;
      }, "Every array a BatchView points at, by name: uint8 views of the host memory (for device backends).")
      .def("batch_view", [](cule::Emulator& e, const std::map<std::string, uint64_t>& addresses, uint32_t lanes,
                            int batch_index) {
        if (batch_index < 0 || batch_index >= cule::kMaxRefBatches)
          throw std::invalid_argument("batch_index must lie in [0, " + std::to_string(cule::kMaxRefBatches) +
                                      "): the batches launched together");
        if (e.num_envs() > (1 << cule::kRefEnvBits))
          throw std::invalid_argument("a device batch holds at most " + std::to_string(1 << cule::kRefEnvBits) +
                                      " environments");
        cule::BatchView b = e.view_at([&](const char* name) -> uint64_t {
          const auto it = addresses.find(name);
          return it == addresses.end() ? 0 : it->second;
        }, lanes);
        b.ref_base = cule::env_ref(batch_index, 0);
        return py::bytes(reinterpret_cast<const char*>(&b), sizeof b);
      }, py::arg("addresses"), py::arg("lanes"), py::arg("batch_index") = 0,
         "The bytes of a BatchView whose arrays are at the given addresses (name -> address), the lane arrays "
         "(lane_arrays) and the render log's accesses in lane layout `lanes` (device_lanes on devices); "
         "batch_index: its place among the BatchViews the step kernels are launched over together "
         "(cule/cpp/vector/vector.hpp env_ref).")
      .def("lane_arrays", &cule::Emulator::lane_arrays,
           "The arrays that device batches keep in lane layout (cule/cpp/common.hpp): name -> bytes per struct.")
      .def("device_arrays", &cule::Emulator::device_arrays, py::arg("frames_per_env"),
           py::arg("accesses_per_env"),
           "The arrays only device batches have (the render log, render_log.hpp, turned on by this call, and the "
           "reset list): bytes by name, which batch_view() then expects addresses for.")
      .def("prepare_start_cache", &cule::Emulator::prepare_start_cache, py::arg("seed"))
      .def(
          "pool_stats",
          [](const cule::Emulator& e) -> py::object { return e.pool() ? py::object(pool_stats(*e.pool())) : py::none(); },
          "ThreadPool.stats of the threads of the last run (None before the first); a new number of threads "
          "starts a new pool, and new figures.")
      .def(
          "clear_pool_stats", [](cule::Emulator& e) { if (e.pool()) e.pool()->clear_stats(); },
          "Starts the pool's figures (pool_stats) from zero.");
}

// One environment's inner state, for tests and debugging.
void bind_inspection(EmulatorClass& c) {
  c.def("game_over", &cule::Emulator::game_over, py::arg("env"))
      .def("lives", &cule::Emulator::lives, py::arg("env"))
      .def("ram", [](const cule::Emulator& e, int env) {
        return py::array_t<uint8_t>(128, e.machine(env).riot.ram);
      }, py::arg("env"))
      .def("ram_rows", [](const cule::Emulator& e, const Ids& ids) {
        // A batch's RAM in one call: a Python loop over ram() cost more than its step on small batches.
        if (ids.ndim() != 1) throw std::invalid_argument("ids must be a 1-D int32 array");
        const int count = (int)ids.shape(0), bytes = (int)sizeof(e.machine(0).riot.ram);
        py::array_t<uint8_t> rows({count, bytes});
        for (int i = 0; i < count; ++i)
          std::copy_n(e.machine(ids.data()[i]).riot.ram, bytes, rows.mutable_data() + (size_t)i * bytes);
        return rows;
      }, py::arg("ids"), "RIOT RAM of environments `ids`, uint8 [len(ids), 128] (IndexError for an id out of range).")
      .def("screen", [](const cule::Emulator& e, int env) {
        return py::array_t<uint8_t>({e.screen_height(), (int)cule::kScreenWidth}, e.screen(env));
      }, py::arg("env"))
      .def("counters_batch", [](const cule::Emulator& e) {
        py::array_t<int64_t> frame(e.num_envs()), episode(e.num_envs());
        for (int i = 0; i < e.num_envs(); ++i) {
          frame.mutable_data()[i] = e.state(i).frame_number;
          episode.mutable_data()[i] = e.state(i).episode_frame_number;
        }
        return py::make_tuple(frame, episode);
      }, "(frame_number [N], episode_frame_number [N])")
      .def("counters", [](const cule::Emulator& e, int env) {
        const auto& s = e.state(env);
        return py::make_tuple(s.frame_number, s.episode_frame_number);
      }, py::arg("env"), "(frame_number, episode_frame_number)")
      .def("tia_state", &tia_state, py::arg("env"),
           "The TIA's members by name (cule::Tia in chips/tia.hpp), for debugging.")
      .def("debug", &debug_state, py::arg("env"),
           "One environment's state for debugging: {'machine', 'cpu', 'riot' (without its RAM), 'tia', 'env', "
           "'game'}, each a dict of the struct's members by name.");
}

}  // namespace

void bind_emulator(py::module_& m) {
  EmulatorClass c(m, "Emulator", "A batch of ALE environments of one ROM (CPU backend, low level).");
  py::class_<cule::ThreadPool>(m, "ThreadPool", "Worker threads shared by the emulators of a batch of many games.")
      .def(py::init<int>(), py::arg("threads"))
      .def_property_readonly("size", &cule::ThreadPool::size)
      .def("stats", &pool_stats, POOL_STATS_DOC)
      .def("clear_stats", &cule::ThreadPool::clear_stats);
  m.def("run_batches", &run_batches, py::arg("pool"), py::arg("emulators"), py::arg("ids"), py::arg("actions"),
        py::arg("seeds"), py::arg("force_reset"),
        "Emulator.vector_run for several emulators at once, their environments shared out over one pool's threads "
        "(seeds: None or int64 per emulator).");
  m.def("results_at", &results_at, py::arg("emulators"), py::arg("ids"), py::arg("positions"), py::arg("obs_shape"),
        py::arg("same_step"), py::arg("pool") = nullptr, py::arg("env_ids") = py::none(),
        "Emulator.results for several emulators into one batch: emulator k's environments ids[k] at batch positions "
        "positions[k] (int32, or None for 0, 1, ...), copied on the pool's threads (None: this thread); the fourth "
        "result is a copy of env_ids (int32, one per environment of the batch), or None without them.");
  py::list batch_arrays;  // the names a device backend keeps a batch's arrays under
#define CULE_ARRAY_NAME(name, field, storage) batch_arrays.append(#name);
  CULE_BATCH_ARRAYS(CULE_ARRAY_NAME)
#undef CULE_ARRAY_NAME
  m.attr("batch_arrays") = batch_arrays;
  py::list host_loop_arrays;  // of those, the ones a GPU's kernels never read
#define CULE_ARRAY_NAME(name) host_loop_arrays.append(#name);
  CULE_HOST_LOOP_ARRAYS(CULE_ARRAY_NAME)
#undef CULE_ARRAY_NAME
  m.attr("host_loop_arrays") = host_loop_arrays;
  bind_console(c);
  bind_vector(c);
  bind_states(c);
  bind_device_layout(c);
  bind_inspection(c);
}

}  // namespace cule::bindings
