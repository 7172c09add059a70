// A mapper's share of the CPU backend behind function pointers. The core is
// templates over the mapper, and compiling it for all of them in one file
// takes one core many minutes: each mapper's copy is built in a translation
// unit of its own (mapper_unit.cpp, once per entry of mappers.inc), and the
// rest of the extension calls it through this table.
#pragma once

#include <stdexcept>
#include <vector>

#include "cart/carts.hpp"
#include "console/console.hpp"
#include "ale/environment.hpp"
#include "vector/vector.hpp"
#include "vector/state_check.hpp"

namespace cule {

// A ROM's properties as ALE reads them from Stella's database.
struct RomSettings {
  CartType cart;
  uint16_t ystart = 34, height = 210;
  bool hmove_blanks = true;
  bool fixed_pal = false;    // Display.Format = PAL (no detection)
  bool detect_format = true; // Display.Format = AUTO-DETECT
  uint8_t initial_switches = 0x3F;
  ControllerSetup controllers{0, 0, 0, 0, 27450, 790196};
};

// One environment of a batch is named by the batch's view and its index.
struct MapperOps {
  uint32_t rom_bytes;  // the image the mapper indexes without bounds checks
  // The Console constructor: fills `power_on` and rom.tia (NTSC, or PAL
  // after detection); returns whether the ROM runs as PAL.
  bool (*power_on)(Machine& power_on, RomView& rom, const RomSettings& settings, const Controls& idle);
  // EnvVectorizer::execute_env (VectorEnv::run), compiled once per step
  // policy (vector.hpp); run(step) names the one for a policy.
  using Run = void (*)(const BatchView& b, int env, int action, int64_t seed, bool force_reset);
  Run run_vector_env;
  Run run_gymnasium;
  // ALEInterface's single-environment calls (tests, debugging, start states).
  void (*load)(const BatchView& b, int env, uint32_t seed, int mode, int difficulty);
  void (*set_mode)(const BatchView& b, int env, int mode, int difficulty);
  void (*reset_game)(const BatchView& b, int env);
  int (*act)(const BatchView& b, int env, int action_a, int action_b, bool draw);
  void (*ale_reset)(const BatchView& b, int env, int noops);
  // A saved row's payload checked before it is loaded (state_check.hpp).
  int32_t (*check_row)(const BatchView& b, const uint8_t* row, bool with_rng);
  // The code maps of an image (CodeMap), empty for a mapper without.
  std::vector<uint16_t> (*code_maps)(const uint8_t* image, uint32_t bytes);

  Run run(VectorEnvStep) const { return run_vector_env; }
  Run run(GymnasiumStep) const { return run_gymnasium; }
};

// Defined in mapper_unit.hpp; instantiated for Games by each mapper's unit.
template <class Cart, class GameSet>
const MapperOps& ops_of();

template <class GameSet>
const MapperOps& mapper_ops(CartType type) {
  switch (type) {
#define CULE_MAPPER(name, Type) \
  case CartType::k##name: return ops_of<Type, GameSet>();
#include "cart/mappers.inc"
#undef CULE_MAPPER
  }
  throw std::invalid_argument("unknown cartridge type");
}

}  // namespace cule
