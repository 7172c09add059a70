// pybind11 module cule._core: the CPU backend of the emulator core.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>
#include <tuple>
#include <vector>

#include "cpu6507.hpp"
#include "flat_bus.hpp"

namespace py = pybind11;
using cule::Cpu6507;
using cule::FlatBus;

namespace {

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
py::tuple cpu_step_flat(Memory memory, const Registers& regs) {
  Cpu6507 cpu = make_cpu(regs);
  cule::BusAccess log[16];
  FlatBus bus{flat_memory(memory)};
  bus.log = log;
  bus.log_capacity = 16;
  cule::cpu::step(cpu, bus);
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

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "cule emulator core (CPU backend)";
  m.def("cpu_step_flat", &cpu_step_flat, py::arg("memory"), py::arg("registers"),
        "Run one 6507 instruction on a flat 64 KiB memory (modified in place).\n"
        "registers = (pc, s, a, x, y, p). Returns (registers, cycles, accesses, jammed),\n"
        "accesses being (address, value, is_write) in bus order.");
  m.def("cpu_run_flat", &cpu_run_flat, py::arg("memory"), py::arg("pc"), py::arg("max_instructions"),
        "Run from pc on a flat 64 KiB memory until an instruction jumps to itself.\n"
        "Returns (pc, instructions, cycles, trapped, jammed).");
}
