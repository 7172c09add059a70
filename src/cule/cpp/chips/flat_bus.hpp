// A flat 64 KiB memory for running the CPU alone: the per-opcode tests and
// the Dormann functional test see a plain 6502 address space, not the 2600's.
#pragma once

#include "common.hpp"
#include "cpu6507.hpp"

namespace cule {

struct BusAccess {
  uint16_t address;
  uint8_t value;
  uint8_t is_write;
};

struct FlatBus {
  uint8_t* memory;          // 65536 bytes
  uint32_t cycles = 0;
  BusAccess* log = nullptr;  // optional: every access, in order
  uint32_t log_capacity = 0;
  uint32_t log_size = 0;

  CULE_HD void record(uint16_t address, uint8_t value, bool is_write) {
    if (log_size < log_capacity) log[log_size] = BusAccess{address, value, (uint8_t)is_write};
    ++log_size;
  }
  CULE_HD uint8_t peek(uint16_t address) {
    const uint8_t v = memory[address];
    record(address, v, false);
    return v;
  }
  CULE_HD uint8_t peek_code(uint16_t address) { return peek(address); }
  CULE_HD void poke(uint16_t address, uint8_t v, bool /*after_read*/ = true) {
    memory[address] = v;
    record(address, v, true);
  }
  CULE_HD void tick(uint32_t n) { cycles += n; }
  CULE_HD void jam() {}  // run_until_trap stops at cpu.jammed
  CULE_HD void loop_back(Cpu6507&) {}
};

struct FlatRunResult {
  uint16_t pc;
  uint64_t instructions;
  uint64_t cycles;
  bool trapped;  // stopped on an instruction that jumps to itself
};

// Runs until an instruction leaves PC where it was (a `jmp *` trap, the way
// functional test ROMs report their result), the CPU jams, or the budget ends.
inline FlatRunResult run_until_trap(Cpu6507& cpu, FlatBus& bus, uint64_t max_instructions) {
  FlatRunResult r{cpu.pc, 0, 0, false};
  uint64_t cycles = 0;
  while (r.instructions < max_instructions && !cpu.jammed) {
    const uint16_t before = cpu.pc;
    const uint32_t c0 = bus.cycles;
    cpu::step(cpu, bus);
    cycles += (uint32_t)(bus.cycles - c0);
    ++r.instructions;
    if (cpu.pc == before) {
      r.trapped = true;
      break;
    }
  }
  r.pc = cpu.pc;
  r.cycles = cycles;
  return r;
}

}  // namespace cule
