// Prototype driver: steps `envs` environments of one game, one thread, random actions; prints the CPU time
// per env-step and the FNV-1a of the last screens. Usage: driver CONFIG [ENVS [STEPS]] (CONFIG from mkcfg.py).
#include <cstdio>
#include <ctime>
#include <random>
#include <set>
#include <string>
#include <vector>
#ifdef PROTO_TRACE
namespace proto { std::set<uint32_t> pcs; }
#ifdef PROTO_BANKED
#define CULE_TRACE_INSTRUCTION() if (c.pc & 0x1000) proto::pcs.insert((uint32_t)(bus.direct[0] - bus.image) + (c.pc & 0xFFF))
#else
#define CULE_TRACE_INSTRUCTION() proto::pcs.insert(c.pc)
#endif
#endif
#include "ale/games/registry.hpp"
#include "host/emulator.hpp"
#include "host/fnv1a.hpp"
#include "host/mapper_unit.hpp"
#include "driver_config.hpp"  // src/cule/benchmarks
using namespace cule;
int main(int argc, char** argv) {
  const driver::Config cfg = driver::read_config(argv[1], CULE_SIMT_CART_TYPE);
  const int envs = argc > 2 ? atoi(argv[2]) : (int)cfg.num("envs");
  const int steps = argc > 3 ? atoi(argv[3]) : (int)cfg.num("steps");
  const std::vector<int>& actions = cfg.actions;
  BasicEmulator<OneGame<games::CULE_SIMT_GAME>> emu(cfg.image, cfg.settings, 0, envs, cfg.sticky(), 0);
  emu.configure_vector(cfg.options, cfg.rgb.data(), cfg.gray.data());
  std::vector<int32_t> ids(envs), acts(envs);
  std::vector<int64_t> seeds(envs);
  for (int i = 0; i < envs; ++i) ids[i] = i, seeds[i] = i;
  emu.vector_run(ids.data(), envs, nullptr, seeds.data(), true, 1);
  std::mt19937 rng(0);
  std::clock_t c0 = std::clock();
  for (int t = 0; t < steps; ++t) {
    for (int i = 0; i < envs; ++i) acts[i] = actions[rng() % actions.size()];
    emu.vector_run(ids.data(), envs, acts.data(), nullptr, false, 1);
  }
  double cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
  Fnv1a h;
  for (int i = 0; i < envs; ++i) h.mix(emu.screen(i), (size_t)emu.screen_height() * kScreenWidth);
  std::printf("cpu_us_per_env_step %.3f screens %016llx\n", cpu * 1e6 / (double(steps) * envs), (unsigned long long)h.hash);
#ifdef PROTO_TRACE
  std::FILE* f = std::fopen("pcs.txt", "w");
  for (uint32_t pc : proto::pcs) std::fprintf(f, "%u\n", pc);
  std::fclose(f);
#endif
  return 0;
}
