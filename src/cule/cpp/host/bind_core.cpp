// cule._core: the 6507 alone on a flat bus (the CPU tests), the INTER_AREA
// resize, the lane layout's conversions and the core's lists.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "chips/cpu6507.hpp"
#include "chips/flat_bus.hpp"
#include "ale/games/registry.hpp"
#include "bindings.hpp"
#include "field_views.hpp"
#include "vector/preprocess.hpp"
#include "chips/render_log.hpp"
#include "vector/vector.hpp"
#include "vector/state_check.hpp"

namespace cule::bindings {
namespace {

using cule::Cpu6507;
using cule::FlatBus;
using Memory = py::array_t<uint8_t, py::array::c_style>;
using Registers = std::tuple<int, int, int, int, int, int>;  // pc, s, a, x, y, p

uint8_t* flat_memory(Memory& memory) {
  if (memory.ndim() != 1 || memory.shape(0) != 65536)
    throw std::invalid_argument("memory must be a contiguous uint8 array of 65536 bytes");
  return memory.mutable_data();
}

Cpu6507 make_cpu(const Registers& r) {
  Cpu6507 c{};
  c.pc = (uint16_t)std::get<0>(r);
  c.sp = (uint8_t)std::get<1>(r);
  c.a = (uint8_t)std::get<2>(r);
  c.x = (uint8_t)std::get<3>(r);
  c.y = (uint8_t)std::get<4>(r);
  cule::cpu::load_status(c, (uint8_t)std::get<5>(r));
  return c;
}

Registers registers_of(const Cpu6507& c) { return Registers{c.pc, c.sp, c.a, c.x, c.y, c.p}; }

// One instruction on a flat 64 KiB memory, modified in place. Returns the
// registers after it, the cycles it took, every bus access in order as
// (address, value, is_write), and whether it jammed the CPU.
// lazy_flags: through the registers of the host's threaded loop (cpu::LazyFlags).
py::tuple cpu_step_flat(Memory memory, const Registers& regs, bool lazy_flags) {
  Cpu6507 cpu = make_cpu(regs);
  cule::BusAccess log[16];
  FlatBus bus{flat_memory(memory)};
  bus.log = log;
  bus.log_capacity = 16;
  if (lazy_flags) {
    cule::cpu::LazyFlags lazy = cule::cpu::lazy_of(cpu);
    cule::cpu::step(lazy, bus);
    cpu = cule::cpu::plain_of(lazy);
  } else {
    cule::cpu::step(cpu, bus);
  }
  py::list accesses;
  for (uint32_t i = 0; i < bus.log_size && i < bus.log_capacity; ++i)
    accesses.append(py::make_tuple(log[i].address, log[i].value, (bool)log[i].is_write));
  return py::make_tuple(registers_of(cpu), bus.cycles, accesses, (bool)cpu.jammed);
}

py::tuple cpu_run_flat(Memory memory, int pc, uint64_t max_instructions) {
  Cpu6507 cpu = make_cpu(Registers{pc, 0xFF, 0, 0, 0, 0});
  FlatBus bus{flat_memory(memory)};
  cule::FlatRunResult r;
  {
    py::gil_scoped_release release;
    r = cule::run_until_trap(cpu, bus, max_instructions);
  }
  return py::make_tuple(r.pc, r.instructions, r.cycles, r.trapped, (bool)cpu.jammed);
}


// The 6507 alone on a flat bus (the CPU tests).
void bind_cpu(py::module_& m) {
  m.def("cpu_step_flat", &cpu_step_flat, py::arg("memory"), py::arg("registers"), py::arg("lazy_flags") = false,
        "Run one 6507 instruction on a flat 64 KiB memory (modified in place).\n"
        "registers = (pc, s, a, x, y, p). Returns (registers, cycles, accesses, jammed),\n"
        "accesses being (address, value, is_write) in bus order. lazy_flags: run it on the registers\n"
        "of the host's frame loop, which keep C, N and Z apart from P.");
  m.def("cpu_run_flat", &cpu_run_flat, py::arg("memory"), py::arg("pc"), py::arg("max_instructions"),
        "Run from pc on a flat 64 KiB memory until an instruction jumps to itself.\n"
        "Returns (pc, instructions, cycles, trapped, jammed).");
}

void bind_resize(py::module_& m) {
  m.def("resize_area", [](py::array_t<uint8_t, py::array::c_style> src, int dst_h, int dst_w) {
    if (src.ndim() != 2 && !(src.ndim() == 3 && src.shape(2) == 3))
      throw std::invalid_argument("src must be uint8 [H, W] or [H, W, 3]");
    const int h = (int)src.shape(0), w = (int)src.shape(1), cn = src.ndim() == 3 ? 3 : 1;
    if (dst_h <= 0 || dst_w <= 0 || dst_h > cule::kMaxObsSide || dst_w > cule::kMaxObsSide)
      throw std::invalid_argument("resize_area: dst_h and dst_w must lie in 1.." + std::to_string(cule::kMaxObsSide));
    std::vector<cule::AreaTap> taps(cule::preprocess::plan_taps(w, h, dst_w, dst_h));
    const cule::ResizePlan plan = cule::preprocess::make_plan(w, h, dst_w, dst_h, cn, taps.data());
    std::vector<ssize_t> shape{dst_h, dst_w};
    if (cn == 3) shape.push_back(3);
    py::array_t<uint8_t> out(shape);
    std::vector<float> scratch(2 * (size_t)dst_w * cn);
    cule::preprocess::resize(plan, src.data(), out.mutable_data(), scratch.data());
    return out;
  }, py::arg("src"), py::arg("dst_h"), py::arg("dst_w"),
     "cv2.resize(src, (dst_w, dst_h), interpolation=cv2.INTER_AREA), as the vector env does it (growing too).");
  m.def("resize_period", [](int src_h, int src_w, int dst_h, int dst_w, int channels) {
    std::vector<cule::AreaTap> taps(cule::preprocess::plan_taps(src_w, src_h, dst_w, dst_h));
    return cule::preprocess::make_plan(src_w, src_h, dst_w, dst_h, channels, taps.data()).period_src;
  }, py::arg("src_h"), py::arg("src_w"), py::arg("dst_h"), py::arg("dst_w"), py::arg("channels") = 1,
     "Source bytes of a period of the resize's x cells, whose pass the host runs four periods at a time; 0: none.");
}

// Lane layout (common.hpp) for the device copies of the lane arrays:
// the conversions use the kernels' own lane_slot.
void bind_lanes(py::module_& m) {
  m.attr("device_lanes") = cule::kDeviceLanes;
  m.attr("max_obs_side") = cule::kMaxObsSide;  // img_height and img_width

  m.def("to_lanes", [](py::array_t<uint8_t, py::array::c_style> structs, size_t item_bytes, uint32_t lanes) {
    if (item_bytes == 0 || item_bytes % 4 || structs.size() % item_bytes || lanes == 0)
      throw std::invalid_argument("to_lanes: whole structs of whole 4-byte words, and lanes > 0");
    const size_t count = structs.size() / item_bytes, words = item_bytes / 4;
    const size_t padded = (count + lanes - 1) / lanes * lanes;
    py::array_t<uint8_t> out((ssize_t)(padded * item_bytes));
    uint8_t* to = out.mutable_data();
    std::fill(to, to + padded * item_bytes, (uint8_t)0);
    const uint8_t* from = structs.data();
    for (size_t env = 0; env < count; ++env)
      for (size_t w = 0; w < words; ++w)
        std::memcpy(to + 4 * cule::lane_slot((int)env, w, words, lanes), from + env * item_bytes + 4 * w, 4);
    return out;
  }, py::arg("structs"), py::arg("item_bytes"), py::arg("lanes"),
     "One struct per environment (uint8, contiguous) rearranged into lane layout, padded to whole tiles.");
  m.def("from_lanes", [](py::array_t<uint8_t, py::array::c_style> lane_bytes, size_t item_bytes, uint32_t lanes,
                         size_t count) {
    const size_t words = item_bytes / 4;
    if (item_bytes == 0 || item_bytes % 4 || lanes == 0 ||
        (size_t)lane_bytes.size() < (count + lanes - 1) / lanes * lanes * item_bytes)
      throw std::invalid_argument("from_lanes: the array is smaller than count structs in lane layout");
    py::array_t<uint8_t> out((ssize_t)(count * item_bytes));
    uint8_t* to = out.mutable_data();
    const uint8_t* from = lane_bytes.data();
    for (size_t env = 0; env < count; ++env)
      for (size_t w = 0; w < words; ++w)
        std::memcpy(to + env * item_bytes + 4 * w, from + 4 * cule::lane_slot((int)env, w, words, lanes), 4);
    return out;
  }, py::arg("lane_bytes"), py::arg("item_bytes"), py::arg("lanes"), py::arg("count"),
     "The inverse of to_lanes: `count` structs, one after another.");
  m.attr("batch_view_bytes") = sizeof(cule::BatchView);
  py::list faults;  // a fault code k > 0 is faults[k - 1] (vector/state_check.hpp)
#define CULE_FAULT_TUPLE(name, part, field, rule) faults.append(py::make_tuple(#name, part, field, rule));
  CULE_STATE_FAULTS(CULE_FAULT_TUPLE)
#undef CULE_FAULT_TUPLE
  m.attr("state_faults") = faults;
  py::dict checked;  // name -> (part, offset in the part, bytes) of each field the checks read
  for (const cule::CheckedField& f : cule::kCheckedFields)
    checked[f.name] = py::make_tuple(cule::kStatePartNames[f.part], f.offset, f.bytes);
  m.attr("state_checked_fields") = checked;
  m.attr("ref_env_bits") = cule::kRefEnvBits;  // environment references (vector.hpp env_ref)
  m.attr("max_ref_batches") = cule::kMaxRefBatches;
  m.attr("machine_slot_bytes") = sizeof(cule::MachineSlot);
  m.attr("render_log_bytes") = sizeof(cule::RenderLog);
  m.attr("render_log_dtype") = CULE_FIELDS_DTYPE(cule::RenderLog, CULE_RENDER_LOG_FIELDS);
}

// The core's lists: game units and their legal actions, mappers, vector options, step outputs.
void bind_lists(py::module_& m) {
  py::list games, mappers;
  py::dict units;  // ALE game id -> the game unit's C++ name
  for (int i = 0; i < (int)cule::GameId::kCount; ++i) {
    games.append(cule::kGameNames[i]);
    units[cule::kGameNames[i]] = cule::kGameUnits[i];
  }
  py::dict mapper_types, step_policies;  // what a kernel build compiles in: -DCULE_CART=..., -DCULE_STEP=...
#define CULE_MAPPER(name, Type) mappers.append(#name), mapper_types[#name] = "cule::" #Type;
#include "cart/mappers.inc"
#undef CULE_MAPPER
#define CULE_STEP_POLICY(gymnasium, Policy) step_policies[py::bool_(gymnasium)] = "cule::" #Policy;
  CULE_STEP_POLICIES(CULE_STEP_POLICY)
#undef CULE_STEP_POLICY
  m.attr("mapper_types") = mapper_types;
  m.attr("step_policies") = step_policies;
  m.attr("games") = games;
  m.attr("game_units") = units;
  m.def("legal_actions", [](const std::string& game) {
    for (int id = 0; id < (int)cule::GameId::kCount; ++id) {
      if (game != cule::kGameNames[id]) continue;
      py::list actions;
      for (int a = 0; a < cule::kPlayerBNoop; ++a)
        if (cule::Games::is_legal((uint8_t)id, a)) actions.append(a);
      return actions;
    }
    throw std::invalid_argument("no game unit named '" + game + "'");
  }, py::arg("game"), "ALE's legal action set of a game unit (getLegalActionSet): the actions it does not turn "
                      "into NOOP.");
  m.attr("mappers") = mappers;
  py::dict options;  // name -> (default, meaning), in VectorOptions' order
#define CULE_OPTION(type, name, value, meaning) options[#name] = py::make_tuple((int64_t)(value), meaning);
#include "vector/vector_options.inc"
#undef CULE_OPTION
  m.attr("vector_options") = options;
  py::dict outputs;  // name -> numpy dtype, in cule_gather's order
#define CULE_OUTPUT_DTYPE(type, name, element, field) outputs[#name] = py::dtype::of<element>();
  CULE_STEP_OUTPUTS(CULE_OUTPUT_DTYPE)
#undef CULE_OUTPUT_DTYPE
  m.attr("step_outputs") = outputs;
  py::dict fields;  // name -> (byte offset, bytes) of the output in an environment's EnvResult
#define CULE_OUTPUT_FIELD(type, name, element, field) \
  fields[#name] = py::make_tuple(offsetof(cule::EnvResult, field), sizeof(type));
  CULE_STEP_OUTPUTS(CULE_OUTPUT_FIELD)
#undef CULE_OUTPUT_FIELD
  m.attr("result_fields") = fields;
  m.attr("result_bytes") = sizeof(cule::EnvResult);
}

}  // namespace

void bind_core(py::module_& m) {
  bind_cpu(m);
  bind_resize(m);
  bind_lanes(m);
  bind_lists(m);
}

}  // namespace cule::bindings
