// C++ check of the 6507 core for people working on it without Python:
// Klaus Dormann's functional test must reach its success trap at $3469.
#include <cstdio>
#include <vector>

#include "chips/flat_bus.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s 6502_functional_test.bin\n", argv[0]);
    return 2;
  }
  std::FILE* f = std::fopen(argv[1], "rb");
  if (!f) {
    std::fprintf(stderr, "cannot open %s\n", argv[1]);
    return 2;
  }
  std::vector<uint8_t> memory(65536);
  const size_t n = std::fread(memory.data(), 1, memory.size(), f);
  std::fclose(f);
  if (n != memory.size()) {
    std::fprintf(stderr, "%s: expected 65536 bytes, read %zu\n", argv[1], n);
    return 2;
  }
  cule::Cpu6507 cpu{};
  cpu.pc = 0x0400;
  cpu.sp = 0xFF;
  cule::cpu::load_status(cpu, 0);
  cule::FlatBus bus{memory.data()};
  const cule::FlatRunResult r = cule::run_until_trap(cpu, bus, 200000000ull);
  std::printf("Dormann: trapped=%d at $%04X after %llu instructions, %llu cycles\n", r.trapped, r.pc,
              (unsigned long long)r.instructions, (unsigned long long)r.cycles);
  return (r.trapped && r.pc == 0x3469) ? 0 : 1;
}
