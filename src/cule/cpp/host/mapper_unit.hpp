// The body of MapperOps for one mapper (mapper_ops.hpp): included by the
// mapper's translation unit (mapper_unit.cpp) and by programs that build the
// core for one game in one file (tests/fuzz).
#pragma once

#include "mapper_ops.hpp"

namespace cule {

template <class Cart, class GameSet>
struct MapperUnit {
  // The environment's console checked out into a local, the host's slot
  // (a base, so that it exists before EnvCopy loads it).
  struct LocalSlot {
    Machine local;
  };
  struct Env : LocalSlot, EnvCopy<Cart, GameSet> {
    Env(const BatchView& b, int env) : LocalSlot{}, EnvCopy<Cart, GameSet>(b, env, this->local) {}
  };

  static bool power_on(Machine& machine, RomView& rom, const RomSettings& settings, const Controls& idle) {
    const TiaConfig ntsc{settings.ystart, settings.height, 290, 0, (uint8_t)settings.hmove_blanks};
    rom.tia = ntsc;
    const bool pal =
        console::power_on_detect_pal<Cart>(machine, rom, ntsc, settings.detect_format, idle) || settings.fixed_pal;
    TiaConfig config = ntsc;
    if (pal) {
      config.max_scanlines = 342;
      config.color_loss = 1;
      if (config.height == 210) config.height = 250;
    }
    rom.tia = config;
    console::system_reset<Cart>(machine, rom, config, nullptr);
    return pal;
  }
  template <class Step>
  static void run(const BatchView& b, int env, int action, int64_t seed, bool force_reset) {
    Env copy{b, env};
    (*copy).template run<Step>(action, seed, force_reset);
  }
  static void load(const BatchView& b, int env, uint32_t seed, int mode, int difficulty) {
    Env copy{b, env};
    (*copy).load(seed, mode, difficulty);
  }
  static void set_mode(const BatchView& b, int env, int mode, int difficulty) {
    Env copy{b, env};
    (*copy).set_mode(mode, difficulty);
  }
  static void reset_game(const BatchView& b, int env) {
    Env copy{b, env};
    (*copy).reset_game();
  }
  static int act(const BatchView& b, int env, int action_a, int action_b, bool draw) {
    Env copy{b, env};
    return (*copy).act(action_a, action_b, draw);
  }
  static std::vector<uint16_t> code_maps(const uint8_t* image, uint32_t bytes) {
    std::vector<uint16_t> maps(CodeMap<Cart>::entries(bytes));
    CodeMap<Cart>::build(image, bytes, maps.data());
    return maps;
  }
  static void ale_reset(const BatchView& b, int env, int noops) {
    Env copy{b, env};
    (*copy).ale_reset(noops);
  }
};

template <class Cart, class GameSet>
const MapperOps& ops_of() {
  using U = MapperUnit<Cart, GameSet>;
  static const MapperOps ops{Cart::kRomBytes,
                             &U::power_on,
                             &U::template run<VectorEnvStep>,
                             &U::template run<GymnasiumStep>,
                             &U::load,
                             &U::set_mode,
                             &U::reset_game,
                             &U::act,
                             &U::ale_reset,
                             &check_row<Cart>,
                             &U::code_maps};
  return ops;
}

}  // namespace cule
