// Fuzz driver for the C++ core, built with AddressSanitizer and
// UndefinedBehaviorSanitizer, or with ThreadSanitizer, by tests/test_fuzz.py:
//
//   g++ -std=c++17 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all
//       -DCULE_NO_FORCE_INLINE -Isrc/cule/cpp tests/fuzz/fuzz.cpp -o fuzz -lpthread
//   ./fuzz --frames 100000 --seed 1 [--threads 4] [--haul-every 25] [--rom F8:pitfall.bin ...]
//
// Each case draws, from its own seed, a mapper, an image of one of that
// mapper's sizes (random bytes, random code, VSYNC-less code, code that never
// ends a frame, or a mutated ROM given with --rom), display properties,
// vector-env options, a batch size and a thread count, then runs the whole
// CPU pipeline (power-on, ALE resets, vector steps over random subsets,
// forced partial resets, gathers) with random actions. Every emulated frame
// is checked (instruction bound, state ranges), as is what the batch returns
// (the bare console: reward 0, never terminated); every 8th case runs again
// on one thread and must give bit-identical results. A "haul" is one environment run for tens
// of thousands of frames without a reset: odd seeds a ROM that never ends a
// frame (the 32-bit clocks wrap), even seeds one that never writes VSYNC.
// `--games N` instead runs every game unit over random RAM; `--states N`
// fuzzes saved states (N mutated rows, checked, loaded where they pass, and
// stepped; fuzz_states). A failing case
// prints its seed; `--case S` / `--haul S` replays it alone and `--dump
// FILE` writes its image.
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

// Counts bus accesses per frame: a 6502 instruction makes at most 7, so a
// frame that respects the instruction budget makes at most 7 x budget.
static thread_local uint64_t t_accesses = 0;
#define CULE_TRACE_ACCESS(machine, address, value, is_write) (++t_accesses)

#include "host/emulator.hpp"
#include "host/fnv1a.hpp"
#include "host/mapper_unit.hpp"
#include "chips/flat_bus.hpp"

using namespace cule;

namespace {

// ---- statistics shared by all threads (relaxed: counters only)

std::atomic<uint64_t> g_frames{0}, g_complete{0}, g_budget{0}, g_jammed{0}, g_bad_frames{0};
std::atomic<uint64_t> g_max_accesses{0};
std::atomic<uint64_t> g_wrapped{0};        // frames whose clock passed 2^31 colour clocks (int32 TIA clocks wrap)
std::atomic<uint64_t> g_wrapped_ended{0};  // ... and that a TIA write then ended
std::atomic<uint64_t> g_first_bad{0};  // the first per-frame violation: the code passed to bad_frame

constexpr uint64_t kMaxAccessesPerFrame = 7ull * kFrameInstructionBudget + 16;  // + the reset vector reads

void note_max(std::atomic<uint64_t>& slot, uint64_t v) {
  uint64_t seen = slot.load(std::memory_order_relaxed);
  while (v > seen && !slot.compare_exchange_weak(seen, v, std::memory_order_relaxed)) {
  }
}

void bad_frame(uint64_t code) {
  g_bad_frames.fetch_add(1, std::memory_order_relaxed);
  uint64_t zero = 0;
  g_first_bad.compare_exchange_strong(zero, code, std::memory_order_relaxed);
}

// The bare console's game unit, plus the per-frame checks: step() runs after
// every emulated frame (AleEnv::frame), on the thread that emulated it.
struct FuzzGame : games::Bare {
  CULE_HD static void step(GameState& g, const GameView& v) {
    games::Bare::step(g, v);
    const Machine& m = v.m;
    g_frames.fetch_add(1, std::memory_order_relaxed);
    if (m.cpu.jammed) g_jammed.fetch_add(1, std::memory_order_relaxed);
    else if (m.tia.partial_frame) g_budget.fetch_add(1, std::memory_order_relaxed);  // ran out of instructions
    else g_complete.fetch_add(1, std::memory_order_relaxed);
    if (3ull * m.cycles >= (1ull << 31)) {
      g_wrapped.fetch_add(1, std::memory_order_relaxed);
      if (!m.tia.partial_frame) g_wrapped_ended.fetch_add(1, std::memory_order_relaxed);
    }
    note_max(g_max_accesses, t_accesses);
    if (t_accesses > kMaxAccessesPerFrame) bad_frame(1);
    t_accesses = 0;
    if (m.tia.current_buffer > 1) bad_frame(2);
    // Stella's frame pointer may run YStart rows past the window (tia.hpp render_to).
    if (m.tia.frame_pixel > ((uint32_t)m.tia.config.ystart + m.tia.config.height) * kScreenWidth) bad_frame(3);
    if (m.cart.bank > 3) bad_frame(4);
    for (int i = 0; i < 3; ++i)
      if (m.cart.slice[i] > 7 || m.cart.music[i] > 1) bad_frame(5);
    for (int i = 0; i < 8; ++i)
      if (m.cart.counter[i] > 0x7FF) bad_frame(6);
    if (m.tia.partial_frame > 1 || m.stop > 1) bad_frame(7);
  }
};
using Fuzzed = BasicEmulator<OneGame<FuzzGame>>;

// ---- a small deterministic generator (splitmix64)

struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t below(uint32_t n) { return n ? (uint32_t)(next() % n) : 0; }
  int range(int lo, int hi) { return lo + (int)below((uint32_t)(hi - lo + 1)); }  // inclusive
  bool chance(double p) { return (double)(next() >> 11) * 0x1.0p-53 < p; }
  uint8_t byte() { return (uint8_t)next(); }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[below((uint32_t)v.size())]; }
};

// ---- mappers and images

struct Mapper {
  const char* name;
  CartType type;
  std::vector<uint32_t> sizes;  // image sizes cule accepts for it (roms.py)
  uint32_t bank;                // where vectors repeat: 2K for 2K, else every 4K
};

const std::vector<Mapper>& mappers() {
  static const std::vector<Mapper> all = {
      {"2K", CartType::k2K, {2048, 4096}, 2048},   {"4K", CartType::k4K, {4096, 8192}, 4096},
      {"F8", CartType::kF8, {8192}, 4096},         {"F6", CartType::kF6, {16384}, 4096},
      {"F8SC", CartType::kF8SC, {8192}, 4096},     {"F6SC", CartType::kF6SC, {16384}, 4096},
      {"E0", CartType::kE0, {8192}, 4096},         {"FE", CartType::kFE, {8192}, 4096},
      {"DPC", CartType::kDPC, {10240, 10495, 10496}, 4096},
  };
  return all;
}

// Opcodes that jam this 6502 (found by running each once on a flat bus).
std::vector<bool> jam_opcodes() {
  std::vector<bool> jams(256);
  std::vector<uint8_t> memory(65536, 0);
  for (int op = 0; op < 256; ++op) {
    std::fill(memory.begin(), memory.end(), 0);
    memory[0x0200] = (uint8_t)op;
    Cpu6507 cpu{};
    cpu.pc = 0x0200;
    cpu.sp = 0xFF;
    FlatBus bus{memory.data()};
    cpu::step(cpu, bus);
    jams[op] = cpu.jammed != 0;
  }
  return jams;
}

struct SeedRom {
  std::string mapper, path;
  std::vector<uint8_t> data;
};

enum class Kind { kRandom, kCode, kVsyncless, kEndless, kMutated, kVsyncLoop, kCount };
const char* kind_name(Kind k) {
  static const char* names[] = {"random bytes", "random code", "VSYNC-less code", "never-ending code",
                                "mutated ROM",  "VSYNC-less display loop"};
  return names[(int)k];
}
std::atomic<uint64_t> g_kind_frames[(int)Kind::kCount];
std::atomic<uint64_t> g_mapper_frames[16];

// Emits 6502 code: a mix of instructions that reach every chip, the mapper's
// hotspots and the DPC registers, and loops. `vsync`: allowed to end frames
// with VSYNC (without, frames end at the scanline cap).
void emit_code(Rng& r, uint8_t* out, uint32_t n, bool vsync, const std::vector<bool>& jams) {
  uint32_t i = 0;
  auto put = [&](std::initializer_list<int> bytes) {
    for (int b : bytes)
      if (i < n) out[i++] = (uint8_t)b;
  };
  auto cart_addr = [&]() -> uint16_t {  // somewhere in cartridge space, at any mirror
    static const uint16_t hot[] = {0x1FF6, 0x1FF7, 0x1FF8, 0x1FF9, 0x1FE0, 0x1FE7, 0x1FE8, 0x1FEF, 0x1FF0,
                                   0x1FF7, 0x1000, 0x1040, 0x1050, 0x1058, 0x1070, 0x1078, 0x1080, 0x10FF};
    uint16_t a = r.chance(0.6) ? hot[r.below(sizeof hot / sizeof hot[0])] : (uint16_t)(0x1000 | r.below(0x1000));
    return (uint16_t)((a & 0x1FFF) | (r.below(8) << 13));
  };
  while (i < n) {
    const uint32_t what = r.below(100);
    if (what < 14) {  // TIA write, WSYNC and VSYNC the most often
      int reg = r.chance(0.3) ? 0x02 : r.chance(0.2) ? 0x01 : (int)r.below(0x40);
      if (reg == 0x00 && !vsync) reg = 0x02;
      put({r.pick(std::vector<int>{0x85, 0x86, 0x84}), reg});
    } else if (what < 18 && vsync) {  // a whole VSYNC pulse
      put({0xA9, 0x02, 0x85, 0x00, 0x85, 0x02, 0x85, 0x02, 0x85, 0x02, 0xA9, 0x00, 0x85, 0x00});
    } else if (what < 24) {  // a WSYNC loop of X lines
      put({0xA2, r.byte(), 0x85, 0x02, 0xCA, 0xD0, 0xFB});
    } else if (what < 32) {  // loads of immediates
      put({r.pick(std::vector<int>{0xA9, 0xA2, 0xA0}), r.byte()});
    } else if (what < 40) {  // TIA reads (collisions, paddles, fire buttons)
      put({r.pick(std::vector<int>{0xA5, 0x24, 0xA6}), (int)(r.below(0x10) | (r.below(4) << 4))});
    } else if (what < 48) {  // RIOT: timer writes and reads, ports
      static const int regs[] = {0x280, 0x281, 0x282, 0x283, 0x284, 0x285, 0x294, 0x295, 0x296, 0x297, 0x29C, 0x29F};
      const int a = regs[r.below(12)];
      put({r.chance(0.5) ? 0x8D : 0xAD, a & 0xFF, a >> 8});
    } else if (what < 62) {  // the cartridge: hotspots, SuperChip and DPC registers
      const uint16_t a = cart_addr();
      put({r.pick(std::vector<int>{0xAD, 0x8D, 0xBD, 0x9D, 0xEE, 0x2C}), a & 0xFF, a >> 8});
    } else if (what < 72) {  // RAM and the stack
      put({r.pick(std::vector<int>{0x85, 0xA5, 0xE6, 0xC6, 0x95, 0xB5}), 0x80 | (int)r.below(0x80)});
    } else if (what < 78) {  // register ops, stack ops, flags
      put({r.pick(std::vector<int>{0xE8, 0xC8, 0xCA, 0x88, 0x48, 0x68, 0x08, 0x28, 0x9A, 0xBA, 0x18, 0x38, 0xF8,
                                   0xD8, 0x0A, 0x6A})});
    } else if (what < 84) {  // branches
      put({r.pick(std::vector<int>{0xD0, 0xF0, 0x10, 0x30, 0x90, 0xB0, 0x50, 0x70}), r.byte()});
    } else if (what < 89) {  // jumps and calls anywhere in cartridge space
      const uint16_t a = cart_addr();
      put({r.pick(std::vector<int>{0x4C, 0x20, 0x4C}), a & 0xFF, a >> 8});
    } else if (what < 91) {
      put({r.pick(std::vector<int>{0x60, 0x40, 0x00})});  // RTS, RTI, BRK
    } else {  // anything but a jam
      int op;
      do op = r.byte();
      while (jams[op]);
      put({op, r.byte(), r.byte()});
    }
  }
}

// Code for a ROM that never ends a frame: a loop of 6- and 7-cycle
// read-modify-writes, so the clock grows by some 150,000 cycles per
// (budget-limited) frame and the TIA's 32-bit clocks wrap within a few
// thousand frames. No TIA writes, or (half the ROMs) one every 2^24 loops
// of a RAM counter: the write that finally ends the frame may come at any
// clock, wrapped ones included.
void emit_endless(Rng& r, uint8_t* out, uint32_t n) {
  uint32_t i = 0;
  auto put = [&](int b) {
    if (i < n) out[i++] = (uint8_t)b;
  };
  // With the counter, a short body: 2^24 loops of 9-13 instructions take
  // 6,000-9,000 frames, the clocks wrap after ~4,600 (~6 cycles each).
  const bool counter = r.chance(0.5);
  const uint32_t body = 3 * (uint32_t)(counter ? r.range(6, 10) : r.range(4, 40));
  while (i + 3 < n && i < body) {
    if (r.chance(0.5)) {  // INC abs,X on RAM
      put(0xFE), put(0x80 | (int)r.below(0x80)), put(0x00);
    } else {  // ASL zp,X, a pad byte
      put(0x16), put(0x80 | (int)r.below(0x80)), put(0xEA);
    }
  }
  if (counter) {
    for (int b = 0; b < 3; ++b) put(0xE6), put(0xF0 + b), put(0xD0), put(12 - 4 * b);  // INC $F0+b; BNE end
    put(0xA9), put(r.byte()), put(0x85), put((int)r.below(0x2D));                    // LDA #v; STA (TIA)
  }
  put(0x4C), put(0x00), put(0xF0);  // end: JMP $F000, back to the start of the bank
}

// A display loop that never writes VSYNC or HMOVE: WSYNC lines with some
// TIA writes, so every frame ends at the scanline cap (Stella's TIA::poke). Run
// for long, the never-reset VSYNC-finish and last-HMOVE clocks drift back a
// frame's clocks per frame, through -2^31 after some 32,000 frames, while
// RESM0/RESM1/RESBL/HMM0 compare the clock with the last HMOVE's every line.
void emit_vsyncless_loop(Rng& r, uint8_t* out, uint32_t n) {
  uint32_t i = 0;
  auto put = [&](std::initializer_list<int> bytes) {
    for (int b : bytes)
      if (i < n) out[i++] = (uint8_t)b;
  };
  put({0xA2, r.byte()});                         // start: LDX #lines
  const uint32_t loop = i;
  put({0x85, 0x02});                             // STA WSYNC
  static const int hmove_checks[] = {0x12, 0x13, 0x14, 0x22};
  put({0xA9, r.byte(), 0x85, hmove_checks[r.below(4)]});
  for (int k = r.range(0, 5); k > 0; --k) {     // some colours, graphics, positions
    int reg = 0x01 + (int)r.below(0x2C);
    if (reg == 0x02 || reg == 0x2A) reg = 0x09;  // no second WSYNC, no HMOVE
    put({0xA9, r.byte(), 0x85, reg});
  }
  put({0xCA, 0xD0, (int)(uint8_t)(loop - (i + 3))});  // DEX; BNE loop (from the byte after it)
  put({0x4C, 0x00, 0xF0});                       // JMP $F000
}

// Reset and BRK vectors at the end of every bank (the reset bank differs per
// mapper; FE and DPC read them from other places), pointing into cartridge
// space at `entry`.
void set_vectors(std::vector<uint8_t>& image, const Mapper& mp, uint16_t entry) {
  for (uint32_t end = mp.bank; end <= image.size(); end += mp.bank) {
    image[end - 4] = (uint8_t)entry, image[end - 3] = (uint8_t)(entry >> 8);
    image[end - 2] = (uint8_t)entry, image[end - 1] = (uint8_t)(entry >> 8);
  }
}

std::vector<uint8_t> make_image(Rng& r, const Mapper& mp, Kind kind, const std::vector<SeedRom>& seeds,
                                const std::vector<bool>& jams, std::string& what) {
  if (kind == Kind::kMutated) {
    std::vector<const SeedRom*> mine;
    for (const SeedRom& s : seeds)
      if (s.mapper == mp.name) mine.push_back(&s);
    if (mine.empty()) kind = Kind::kCode;
    else {
      const SeedRom& s = *mine[r.below((uint32_t)mine.size())];
      std::vector<uint8_t> image = s.data;
      const uint32_t flips = r.chance(0.1) ? 0 : 1u << r.below(8);  // 0, or 1 to 128 bytes
      for (uint32_t k = 0; k < flips; ++k) image[r.below((uint32_t)image.size())] ^= (uint8_t)(1 + r.below(255));
      if (r.chance(0.2)) {  // a block from another ROM of the mapper
        const SeedRom& o = *mine[r.below((uint32_t)mine.size())];
        const uint32_t len = 1 + r.below(512), at = r.below((uint32_t)image.size() - len);
        const uint32_t from = r.below((uint32_t)o.data.size() - len);
        std::memcpy(image.data() + at, o.data.data() + from, len);
      }
      what = std::string(kind_name(kind)) + " " + s.path + " (" + std::to_string(flips) + " bytes changed)";
      return image;
    }
  }
  const uint32_t size = r.pick(mp.sizes);
  std::vector<uint8_t> image(size);
  for (auto& b : image) b = r.byte();
  if (kind == Kind::kCode || kind == Kind::kVsyncless) {
    emit_code(r, image.data(), size, kind == Kind::kCode, jams);
  } else if (kind == Kind::kEndless || kind == Kind::kVsyncLoop) {
    for (uint32_t at = 0; at + mp.bank <= size; at += mp.bank) {
      if (kind == Kind::kEndless) emit_endless(r, image.data() + at, mp.bank - 4);
      else emit_vsyncless_loop(r, image.data() + at, mp.bank - 4);
    }
  }
  if (kind != Kind::kRandom || r.chance(0.5)) {
    const bool at_start = kind == Kind::kEndless || kind == Kind::kVsyncLoop;
    const uint16_t entry = at_start ? 0xF000 : (uint16_t)(0xF000 | r.below(0x0FF0));
    set_vectors(image, mp, entry);
  }
  what = kind_name(kind);
  return image;
}

// ---- one case

struct CaseResult {
  cule::Fnv1a digest;  // over everything the batch returned
  std::string error;
  void mix(const void* p, size_t n) { digest.mix(p, n); }
};

struct Settings {
  int haul_every = 0;      // every K-th case is a long haul (0: none)
  uint64_t haul_frames = 40000;
  int max_envs = 3;
  int threads = 1;        // most threads a case may use
  int min_threads = 1;
  int only_kind = -1;      // --kind: every ordinary case of this kind
  int force_threads = 0;   // the repeat of a case runs on one thread: results may not depend on the count
  uint64_t case_frames = 0;  // 0: drawn per case
  bool verbose = false;      // print each case before running it
  bool skip_state_checks = false;  // --states: load every mutated row (shows what the checks prevent)
};

// A case's draw: a mapper and image, display properties, options, batch
// size and threads. `haul`: one environment, never reset, for many frames,
// running a ROM that never ends a frame (the 32-bit clocks wrap) or never
// writes VSYNC.
struct Case {
  const Mapper* mp;
  Kind kind;
  std::vector<uint8_t> image;
  RomSettings rs;
  int n, threads, max_frames;
  float sticky;
  VectorOptions o;
  uint64_t frames_wanted;
  std::string description;
};

Case draw_case(Rng& r, uint64_t case_seed, bool haul, const Settings& set, const std::vector<SeedRom>& seeds,
               const std::vector<bool>& jams) {
  Case c;
  c.mp = &mappers()[r.below((uint32_t)mappers().size())];
  const Mapper& mp = *c.mp;
  const uint32_t k = r.below(100);
  Kind kind = haul ? (case_seed & 1 ? Kind::kEndless : Kind::kVsyncLoop)  // odd seeds: never-ending
            : k < 8 ? Kind::kRandom : k < 38 ? Kind::kCode : k < 48 ? Kind::kVsyncless
            : k < 53 ? Kind::kEndless : Kind::kMutated;
  if (!haul && set.only_kind >= 0) kind = (Kind)set.only_kind;
  c.kind = kind;
  std::string what;
  c.image = make_image(r, mp, kind, seeds, jams, what);

  RomSettings& rs = c.rs;
  rs.cart = mp.type;
  // roms.py's property values, and now and then others the core must also survive.
  rs.ystart = (uint16_t)(r.chance(0.8) ? r.pick(std::vector<int>{34, 26, 30, 40}) : r.range(0, 64));
  rs.height = (uint16_t)(r.chance(0.8) ? r.pick(std::vector<int>{210, 214, 220, 230}) : r.range(100, 250));
  rs.hmove_blanks = r.chance(0.8);
  rs.detect_format = r.chance(0.9);
  rs.fixed_pal = !rs.detect_format && r.chance(0.5);
  rs.initial_switches = r.chance(0.7) ? 0x3F : r.byte();
  rs.controllers = ControllerSetup{(uint8_t)r.chance(0.2), (uint8_t)r.chance(0.1), (uint8_t)r.chance(0.1),
                                   (uint8_t)r.chance(0.1), 0, 0};
  c.n = haul ? 1 : r.range(1, set.max_envs);
  c.sticky = r.chance(0.5) ? 0.0f : r.chance(0.5) ? 0.25f : (float)r.below(1001) / 1000.0f;
  c.max_frames = haul || r.chance(0.7) ? 0 : r.range(1, 3000);
  const int drawn_threads = r.range(set.min_threads, set.threads);
  c.threads = set.force_threads ? set.force_threads : drawn_threads;

  VectorOptions& o = c.o;
  o.frameskip = r.range(1, 5);
  o.stack_num = r.range(1, 4);
  o.grayscale = r.chance(0.5);
  o.maxpool = r.chance(0.5);
  o.noop_max = r.chance(0.3) ? 0 : r.range(1, 30);
  o.fire_reset = r.chance(0.5);
  o.has_fire = r.chance(0.5);
  o.episodic_life = !haul && r.chance(0.2);
  o.life_loss_info = r.chance(0.2);
  o.reward_clipping = r.chance(0.5);
  o.max_episode_steps = haul || r.chance(0.5) ? 2147483647 : r.range(1, 500);
  o.same_step = r.chance(0.5);
  o.gymnasium = r.chance(0.3);
  o.difficulty = r.range(0, 3);
  o.cache_size = r.chance(0.7) ? 0 : r.range(1, 4);
  c.frames_wanted = set.case_frames ? set.case_frames
                    : haul ? set.haul_frames / (kind == Kind::kEndless ? 2 : 1)
                    : kind == Kind::kEndless ? 200 + r.below(800) : 200 + r.below(2500);

  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s %" PRIu64 ": %s, mapper %s, %zu bytes, %d envs, %d threads, ystart %d height %d, fmt %s, "
                "frameskip %d, stack %d, cache %d, same_step %d, gymnasium %d, ~%" PRIu64 " frames",
                haul ? "haul" : "case", case_seed, what.c_str(), mp.name, c.image.size(), c.n, c.threads, rs.ystart,
                rs.height, rs.detect_format ? "auto" : rs.fixed_pal ? "PAL" : "NTSC", o.frameskip, o.stack_num,
                o.cache_size, o.same_step, o.gymnasium, c.frames_wanted);
  c.description = buf;
  return c;
}

// The observation size and palettes drawn once the emulator knows its screen height.
void configure(Fuzzed& emu, Case& c, Rng& r) {
  const int h = emu.screen_height();
  c.o.img_height = r.chance(0.4) ? h : r.chance(0.5) ? 84 : r.range(1, h);
  c.o.img_width = r.chance(0.4) ? 160 : r.chance(0.5) ? 84 : r.range(1, 160);
  if (c.o.img_height > h) c.o.img_height = h;
  uint8_t rgb[256 * 3], gray[256];
  for (auto& b : rgb) b = r.byte();
  for (auto& b : gray) b = r.byte();
  emu.configure_vector(c.o, rgb, gray);
}

CaseResult run_case(uint64_t case_seed, bool haul, const Settings& set, const std::vector<SeedRom>& seeds,
                    const std::vector<bool>& jams, std::string* description, std::vector<uint8_t>* image_out) {
  Rng r{case_seed};
  CaseResult out;
  Case c = draw_case(r, case_seed, haul, set, seeds, jams);
  if (image_out) *image_out = c.image;
  if (description) *description = c.description;
  if (set.verbose) {  // before running: a sanitizer report ends the process
    std::printf("%s\n", c.description.c_str());
    std::fflush(stdout);
  }
  const Mapper& mp = *c.mp;
  const Kind kind = c.kind;
  const int n = c.n, threads = c.threads, max_frames = c.max_frames;
  const uint64_t frames_wanted = c.frames_wanted;
  const VectorOptions& o = c.o;
  Fuzzed emu(c.image, c.rs, 0, n, c.sticky, max_frames);
  t_accesses = 0;  // the power-on frames ran without step()
  configure(emu, c, r);
  const int h = emu.screen_height();
  out.mix(&h, sizeof h);

  const size_t obs_bytes = emu.stacked_bytes();
  std::vector<uint8_t> obs(obs_bytes * n), final_obs(obs_bytes * n);
  std::vector<int32_t> rewards(n), lives(n), frame_numbers(n), episode_frames(n), last_frame_numbers(n, 0);
  std::vector<uint8_t> terminated(n), truncated(n);
  std::vector<int32_t> ids(n), actions(n);
  std::vector<int64_t> seeds_for(n);

  auto fail = [&](const std::string& e) {
    if (out.error.empty()) out.error = e;
  };
  auto gather = [&](int count, bool after_reset) {
    StepOutputs outputs{obs.data(),         rewards.data(),       terminated.data(),
                        truncated.data(),   lives.data(),         frame_numbers.data(),
                        episode_frames.data(), o.same_step ? final_obs.data() : nullptr};
    cule::run_batches(emu.pool(), std::vector{emu.prepare_gather(ids.data(), count, outputs, nullptr)}, {count});
    out.mix(obs.data(), obs_bytes * count);
    out.mix(rewards.data(), 4 * count);
    out.mix(terminated.data(), count);
    out.mix(truncated.data(), count);
    out.mix(frame_numbers.data(), 4 * count);
    out.mix(episode_frames.data(), 4 * count);
    if (o.same_step) out.mix(final_obs.data(), obs_bytes * count);
    for (int i = 0; i < count; ++i) {
      const int env = ids[i];
      // The bare console: no reward, never over, one life.
      if (rewards[i] != 0) fail("reward " + std::to_string(rewards[i]) + " from the bare console");
      // (ALE's own frame limit, when set, ends episodes outside gymnasium mode.)
      if (terminated[i] && max_frames == 0) fail("the bare console reported terminated");
      if (lives[i] != 1) fail("lives " + std::to_string(lives[i]) + ", expected 1");
      if (episode_frames[i] < 0 || frame_numbers[i] < 0) fail("negative frame counter");
      if (!after_reset && frame_numbers[i] < last_frame_numbers[env]) fail("frame_number went back");
      last_frame_numbers[env] = frame_numbers[i];
    }
  };

  // A full seeded reset, then steps over random subsets, forced partial
  // resets now and then.
  const uint64_t start = g_frames.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) ids[i] = i, seeds_for[i] = (int64_t)r.below(0x7FFFFFFF);
  emu.vector_run(ids.data(), n, nullptr, seeds_for.data(), true, threads);
  gather(n, true);
  const uint64_t wrapped_start = g_wrapped.load(std::memory_order_relaxed);
  for (uint64_t steps = 0; g_frames.load(std::memory_order_relaxed) - start < frames_wanted && steps < 1000000;
       ++steps) {
    // A never-ending haul has shown what it is for once its clock has
    // stayed past 2^31 colour clocks for 1,000 frames.
    if (haul && kind == Kind::kEndless && g_wrapped.load(std::memory_order_relaxed) - wrapped_start >= 1000) break;
    // A random subset of environments, in random order, no repeats.
    for (int i = 0; i < n; ++i) ids[i] = i;
    for (int i = n - 1; i > 0; --i) std::swap(ids[i], ids[r.below((uint32_t)i + 1)]);
    const int count = r.chance(0.7) ? n : r.range(1, n);
    if (!haul && r.chance(0.03)) {
      for (int i = 0; i < count; ++i) seeds_for[i] = r.chance(0.5) ? -1 : (int64_t)r.below(0x7FFFFFFF);
      emu.vector_run(ids.data(), count, nullptr, seeds_for.data(), true, threads);
      gather(count, true);
      continue;
    }
    for (int i = 0; i < count; ++i) {
      // ALE's action ids; the core must also take anything else without harm.
      actions[i] = r.chance(0.95) ? (int32_t)r.below(18) : r.chance(0.5) ? 40 : (int32_t)r.below(256);
    }
    emu.vector_run(ids.data(), count, actions.data(), nullptr, false, threads);
    gather(count, false);
    if (!out.error.empty()) break;
    // A jammed CPU stays jammed until a reset, which replays the same code:
    // once all are, the case has nothing left to show.
    bool all_jammed = true;
    for (int env = 0; env < n; ++env) all_jammed = all_jammed && emu.machine(env).cpu.jammed;
    if (all_jammed) break;
  }
  g_kind_frames[(int)kind].fetch_add(g_frames.load(std::memory_order_relaxed) - start, std::memory_order_relaxed);
  g_mapper_frames[&mp - mappers().data()].fetch_add(g_frames.load(std::memory_order_relaxed) - start,
                                                    std::memory_order_relaxed);
  // The raw accessors read every environment too.
  for (int env = 0; env < n; ++env) {
    out.mix(emu.screen(env), (size_t)h * kScreenWidth);
    out.mix(emu.machine(env).riot.ram, 128);
  }
  return out;
}

// ---- saved states whatever their bytes

std::atomic<uint64_t> g_state_trials{0}, g_state_loaded{0}, g_state_refused{0}, g_state_digest{0};
std::atomic<uint64_t> g_state_by_mapper[16], g_state_by_policy[2];  // trials

// Overwrites part of a row's payload the way damage or a crafter would:
// random bytes (mostly in the console and ALE parts, where the indices
// are), a checked field set to an extreme or random value, or one bit.
void mutate(Rng& r, uint8_t* payload, uint32_t bytes, const BatchView& b, bool with_rng) {
  const uint32_t k = r.below(100);
  if (k < 40) {
    const uint32_t head = bytes < 6000 ? bytes : 6000;  // console, ALE state, RNGs, vector state
    const uint32_t count = 1 + r.below(r.chance(0.5) ? 8 : 200);
    for (uint32_t i = 0; i < count; ++i) payload[r.below(r.chance(0.8) ? head : bytes)] = r.byte();
  } else if (k < 85) {
    const CheckedField& f = kCheckedFields[r.below((uint32_t)std::size(kCheckedFields))];
    const int64_t part = part_offset(b, with_rng, f.part);
    if (part < 0) return;  // the row has no such part (the sticky RNG without include_rng)
    uint8_t* at = payload + part + f.offset;
    const uint32_t width = f.bytes == 1 ? 1 : f.bytes % 4 == 0 ? 4 : 2;  // an element of an array field
    const uint32_t element = r.below((uint32_t)(f.bytes / width)) * width;
    const uint64_t extremes[] = {0, ~0ull, 1ull << (8 * width - 1), (1ull << (8 * width - 1)) - 1, r.next(),
                                 (uint64_t)r.below(300), ~0ull - r.below(300)};
    const uint64_t v = extremes[r.below((uint32_t)std::size(extremes))];
    std::memcpy(at + element, &v, width);  // little-endian: the low bytes
    if (r.chance(0.1)) std::memset(at, r.chance(0.5) ? 0 : 0xFF, f.bytes);
  } else {
    payload[r.below(bytes)] ^= (uint8_t)(1u << r.below(8));
  }
}

// `trials` mutated saves: each case's environments step a while, save their
// rows (with or without the sticky RNG), then rows are mutated, their digest
// mostly recomputed (as a crafted row would be), and checked. Where every
// row passes they are loaded and the environments step, draw and gather;
// where one is refused nothing may have changed. Every mapper, both step
// policies, any options (draw_case). A sanitizer report or a hang fails.
std::string fuzz_states(uint64_t case_seed, uint64_t trials, const Settings& set, const std::vector<SeedRom>& seeds,
                        const std::vector<bool>& jams) {
  Rng r{case_seed};
  Case c = draw_case(r, case_seed, false, set, seeds, jams);
  if (set.verbose) {
    std::printf("states %s\n", c.description.c_str());
    std::fflush(stdout);
  }
  Fuzzed emu(c.image, c.rs, 0, c.n, c.sticky, c.max_frames);
  configure(emu, c, r);
  const int n = c.n;
  std::vector<int32_t> ids(n), actions(n);
  std::vector<int64_t> seeds_for(n);
  for (int i = 0; i < n; ++i) ids[i] = i, seeds_for[i] = (int64_t)r.below(0x7FFFFFFF);
  emu.vector_run(ids.data(), n, nullptr, seeds_for.data(), true, c.threads);
  auto step = [&](int steps) {
    for (int t = 0; t < steps; ++t) {
      for (int i = 0; i < n; ++i) actions[i] = (int32_t)r.below(18);
      emu.vector_run(ids.data(), n, actions.data(), nullptr, false, c.threads);
    }
  };
  step(1 + (int)r.below(30));
  const bool with_rng = r.chance(0.7);
  const uint32_t bytes = emu.state_bytes(with_rng);
  const size_t row_bytes = 64 + bytes;
  std::vector<uint8_t> saved(row_bytes * n), rows(row_bytes * n), before(row_bytes * n);
  std::vector<uint64_t> digests(n), kept(n), unused(n);
  std::vector<int32_t> faults(n);
  emu.save_states(ids.data(), n, saved.data(), row_bytes, 64, with_rng, kept.data());
  const BatchView b = emu.view();
  const size_t obs_bytes = emu.stacked_bytes();
  std::vector<uint8_t> obs(obs_bytes * n), final_obs(obs_bytes * n);
  std::vector<int32_t> rewards(n), lives(n), frames(n), episode_frames(n);
  std::vector<uint8_t> terminated(n), truncated(n);
  for (uint64_t t = 0; t < trials; ++t) {
    rows = saved;
    const int mutated = r.chance(0.7) ? 1 : (int)r.range(1, n);
    for (int m = 0; m < mutated; ++m) mutate(r, rows.data() + row_bytes * r.below((uint32_t)n) + 64, bytes, b, with_rng);
    const bool crafted = r.chance(0.8);
    for (int i = 0; i < n; ++i) digests[i] = crafted ? row_digest(rows.data() + row_bytes * i + 64, bytes) : kept[i];
    emu.check_states(rows.data(), n, row_bytes, 64, with_rng, digests.data(), faults.data());
    if (set.skip_state_checks) std::fill(faults.begin(), faults.end(), kStateOk);  // the canary: load anything
    g_state_trials.fetch_add(1, std::memory_order_relaxed);
    g_state_by_mapper[c.mp - mappers().data()].fetch_add(1, std::memory_order_relaxed);
    g_state_by_policy[c.o.gymnasium ? 1 : 0].fetch_add(1, std::memory_order_relaxed);
    bool ok = true;
    for (int i = 0; i < n; ++i) {
      const bool changed = std::memcmp(rows.data() + row_bytes * i, saved.data() + row_bytes * i, row_bytes) != 0;
      if (!crafted && changed && faults[i] != kStateDigest && !set.skip_state_checks)
        return "a changed row kept its old digest and passed";
      if (faults[i] == kStateDigest) g_state_digest.fetch_add(1, std::memory_order_relaxed);
      ok = ok && faults[i] == kStateOk;
    }
    if (!ok) {  // restore_state refuses: the environments are as they were
      g_state_refused.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    g_state_loaded.fetch_add(1, std::memory_order_relaxed);
    emu.save_states(ids.data(), n, before.data(), row_bytes, 64, with_rng, unused.data());
    if (set.skip_state_checks)
      emu.load_states_unchecked(ids.data(), n, rows.data(), row_bytes, 64, with_rng);
    else
      emu.load_states(ids.data(), n, rows.data(), row_bytes, 64, with_rng);
    step(1 + (int)r.below(6));
    StepOutputs outputs{obs.data(), rewards.data(), terminated.data(), truncated.data(), lives.data(),
                        frames.data(), episode_frames.data(), c.o.same_step ? final_obs.data() : nullptr};
    cule::run_batches(emu.pool(), std::vector{emu.prepare_gather(ids.data(), n, outputs, nullptr)}, {n});
    for (int i = 0; i < n; ++i) (void)emu.screen(i), (void)emu.lives(i), (void)emu.game_over(i);
    emu.load_states(ids.data(), n, before.data(), row_bytes, 64, with_rng);  // the unmutated rows again
    if (r.chance(0.05)) {  // now and then a reset, then new rows
      for (int i = 0; i < n; ++i) seeds_for[i] = r.chance(0.5) ? -1 : (int64_t)r.below(0x7FFFFFFF);
      emu.vector_run(ids.data(), n, nullptr, seeds_for.data(), true, c.threads);
      step(1 + (int)r.below(10));
      emu.save_states(ids.data(), n, saved.data(), row_bytes, 64, with_rng, kept.data());
    }
  }
  return "";
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(2);
  }
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// The 104 games' units (reward, terminal, lives from RAM) over random RAM:
// a ROM with an unknown md5 loaded under a game's file name runs that game's
// unit over whatever RAM it makes (roms.py, as ALE). `steps` frames per game,
// each changing a few RAM bytes (sometimes all) so the units' members evolve.
uint64_t fuzz_games(uint64_t seed, uint64_t steps) {
  Rng r{seed};
  uint64_t done = 0;
  for (int id = 0; id < (int)GameId::kCount; ++id) {
    Machine m{};
    for (auto& b : m.riot.ram) b = r.byte();
    for (auto& b : m.cart.ram) b = r.byte();
    GameState g{};
    Games::reset((uint8_t)id, g);
    for (uint64_t t = 0; t < steps; ++t) {
      const int changes = r.chance(0.05) ? 128 : r.range(0, 4);
      for (int c = 0; c < changes; ++c) m.riot.ram[r.below(128)] = r.byte();
      if (r.chance(0.05)) m.cart.ram[r.below(128)] = r.byte();
      if (r.chance(0.001)) Games::reset((uint8_t)id, g);
      Games::step((uint8_t)id, g, GameView{m});
      (void)Games::lives((uint8_t)id, g);
      (void)Games::is_legal((uint8_t)id, (int)r.below(18));
      (void)Games::starting_action((uint8_t)id, (int)r.below(64));
      if (g.terminal > 1) {
        std::fprintf(stderr, "FAIL game %s: terminal %d\n", kGameNames[id], g.terminal);
        std::exit(1);
      }
      ++done;
    }
  }
  return done;
}

// Bugs the fuzzer found, each reduced to a direct check (run by --regressions).
int run_regressions() {
  int failures = 0;
  // 1. A reset during a partial frame leaves the TIA's last update at line 0
  // of the frame (Stella's TIA::frameReset): the next render drew YStart rows past a
  // window-sized buffer. The buffer is its own allocation here, so ASan sees
  // any write past it; rows must show lines 0.. of the frame.
  for (uint16_t ystart : {26, 34, 40}) {
    const TiaConfig config{ystart, 210, 290, 0, 1};
    Tia t{};
    t.partial_frame = 1;
    tia::reset(t, config, 0);
    t.colubk = 0x44;
    std::vector<uint8_t> frame(210 * kScreenWidth, 0);
    const TiaInputs inputs{{kMaxResistance, kMaxResistance, kMaxResistance, kMaxResistance}, {1, 1}};
    const uint32_t cycles = (ystart + 210 + 4) * 76u;  // past the window
    // INPT4 only owes the picture its clock; the bus settles it when the frame's accesses stop.
    tia::peek(t, frame.data(), 0x0C, cycles, 0, inputs, t.last_update_clock);
    tia::settle(t, frame.data(), tia::later(t.last_update_clock, (int32_t)(cycles * 3)));
    for (size_t i = 0; i < frame.size(); ++i)
      if (frame[i] != 0x44) {
        std::fprintf(stderr, "FAIL regression 1 (ystart %d): pixel %zu is %d\n", ystart, i, frame[i]);
        ++failures;
        break;
      }
  }
  std::printf("regressions: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}

// Deliberate bugs, so a test can check that the sanitizers are really in
// the build and that their reports fail the run.
int run_canary(const std::string& what) {
  std::vector<uint8_t> v(16, 1);
  volatile size_t past_end = v.size();
  if (what == "overflow") return v.data()[past_end];  // heap-buffer-overflow (ASan)
  if (what == "signed") {
    volatile int32_t big = 2147483647;
    return (int)(big + (int32_t)v[0]) & 1;  // signed overflow (UBSan)
  }
  if (what == "race") {  // unsynchronised writes from two threads (TSan)
    static int shared = 0;
    std::thread t([] { for (int i = 0; i < 1000; ++i) shared = shared + 1; });
    for (int i = 0; i < 1000; ++i) shared = shared + 1;
    t.join();
    return shared == -1;
  }
  std::fprintf(stderr, "--canary: overflow, signed or race\n");
  return 2;
}

void usage() {
  std::fprintf(stderr,
               "usage: fuzz [--frames N] [--seed S] [--threads T] [--min-threads T] [--max-envs N] [--case-frames N]\n"
               "            [--repeat-every K] [--kind random|code|vsyncless|endless|mutated]\n"
               "            [--canary overflow|signed|race] [--games STEPS_PER_GAME] [--regressions]\n"
               "            [--haul-every K] [--haul-frames N] [--rom MAPPER:PATH ...] [--verbose]\n"
               "            [--case S | --haul S] [--dump FILE]\n"
               "            [--states TRIALS [--trials-per-case K] [--skip-state-checks]]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t total_frames = 100000, seed = 1, only_case = 0;
  bool one_case = false, one_haul = false;
  int repeat_every = 8;  // every K-th case runs twice and must give the same hash
  std::string dump, canary;
  uint64_t game_steps = 0, state_trials = 0, trials_per_case = 200;
  Settings set;
  std::vector<SeedRom> seeds;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--frames") total_frames = std::stoull(value());
    else if (a == "--seed") seed = std::stoull(value());
    else if (a == "--case") only_case = std::stoull(value()), one_case = true;
    else if (a == "--haul") only_case = std::stoull(value()), one_case = one_haul = true;
    else if (a == "--haul-every") set.haul_every = std::stoi(value());
    else if (a == "--haul-frames") set.haul_frames = std::stoull(value());
    else if (a == "--threads") set.threads = std::stoi(value());
    else if (a == "--min-threads") set.min_threads = std::stoi(value());
    else if (a == "--kind") {
      const std::string v = value();
      const char* names[] = {"random", "code", "vsyncless", "endless", "mutated"};
      for (int k = 0; k < 5; ++k)
        if (v == names[k]) set.only_kind = k;
      if (set.only_kind < 0) usage();
    }
    else if (a == "--canary") canary = value();
    else if (a == "--games") game_steps = std::stoull(value());
    else if (a == "--states") state_trials = std::stoull(value());
    else if (a == "--trials-per-case") trials_per_case = std::stoull(value());
    else if (a == "--skip-state-checks") set.skip_state_checks = true;
    else if (a == "--regressions") return run_regressions();
    else if (a == "--max-envs") set.max_envs = std::stoi(value());
    else if (a == "--case-frames") set.case_frames = std::stoull(value());
    else if (a == "--repeat-every") repeat_every = std::stoi(value());
    else if (a == "--dump") dump = value();
    else if (a == "--verbose") set.verbose = true;
    else if (a == "--rom") {
      const std::string v = value();
      const size_t colon = v.find(':');
      if (colon == std::string::npos) usage();
      SeedRom s{v.substr(0, colon), v.substr(colon + 1), {}};
      s.data = read_file(s.path);
      seeds.push_back(std::move(s));
    } else usage();
  }
  if (set.min_threads < 1 || set.threads < set.min_threads || set.max_envs < 1) usage();
  if (!canary.empty()) return run_canary(canary);
  if (game_steps) {
    const auto g0 = std::chrono::steady_clock::now();
    const uint64_t n = fuzz_games(seed, game_steps);
    std::printf("games: %" PRIu64 " steps of %d game units over random RAM in %.1f s; failures 0\n", n,
                (int)GameId::kCount, std::chrono::duration<double>(std::chrono::steady_clock::now() - g0).count());
    return 0;
  }
  for (const SeedRom& s : seeds) {  // a seed must fit its mapper, as load_rom guarantees
    bool ok = false;
    for (const Mapper& m : mappers())
      if (s.mapper == m.name)
        for (uint32_t size : m.sizes) ok = ok || size == s.data.size();
    if (!ok) {
      std::fprintf(stderr, "--rom %s: %zu bytes is not a %s image\n", s.path.c_str(), s.data.size(), s.mapper.c_str());
      return 2;
    }
  }
  const std::vector<bool> jams = jam_opcodes();
  const auto t0 = std::chrono::steady_clock::now();
  if (state_trials) {
    Rng master{seed};
    uint64_t cases = 0;
    while (g_state_trials.load() < state_trials) {
      const uint64_t case_seed = one_case ? only_case : master.next();
      const std::string error = fuzz_states(case_seed, trials_per_case, set, seeds, jams);
      ++cases;
      if (!error.empty()) {
        std::fprintf(stderr, "FAIL states case %" PRIu64 ": %s\n  replay: --states %" PRIu64 " --case %" PRIu64 "\n",
                     case_seed, error.c_str(), trials_per_case, case_seed);
        return 1;
      }
      if (one_case) break;
    }
    std::printf("states: %" PRIu64 " trials in %" PRIu64 " cases, %.1f s: %" PRIu64 " loaded and stepped, %" PRIu64
                " refused (%" PRIu64 " rows by their digest); failures 0\n",
                g_state_trials.load(), cases,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), g_state_loaded.load(),
                g_state_refused.load(), g_state_digest.load());
    std::printf("states by mapper:");
    for (size_t k = 0; k < mappers().size(); ++k) std::printf(" %s %" PRIu64 ";", mappers()[k].name, g_state_by_mapper[k].load());
    std::printf("\nstates by step policy: vector env %" PRIu64 "; gymnasium %" PRIu64 ";\n", g_state_by_policy[0].load(),
                g_state_by_policy[1].load());
    return 0;
  }
  uint64_t cases = 0, repeats = 0;
  Rng master{seed};
  while (one_case ? cases == 0 : g_frames.load() < total_frames) {
    const uint64_t case_seed = one_case ? only_case : master.next();
    const bool haul = one_case ? one_haul : set.haul_every > 0 && cases % (uint64_t)set.haul_every == 1;
    std::string description;
    std::vector<uint8_t> image;
    const uint64_t before_bad = g_bad_frames.load();
    CaseResult a = run_case(case_seed, haul, set, seeds, jams, &description, dump.empty() ? nullptr : &image);
    if (a.error.empty() && !haul && repeat_every > 0 && cases % (uint64_t)repeat_every == 0) {
      Settings one_thread = set;
      one_thread.force_threads = 1;
      const CaseResult b = run_case(case_seed, false, one_thread, seeds, jams, nullptr, nullptr);
      ++repeats;
      if (b.digest.hash != a.digest.hash) a.error = "not deterministic: a second run of the case, on one thread, differs";
    }
    if (a.error.empty() && g_bad_frames.load() != before_bad)
      a.error = "frame check " + std::to_string(g_first_bad.load()) + " failed (1 instruction budget, 2 buffer, "
                "3 frame pointer, 4 bank, 5 E0 slice / DPC music, 6 DPC counter, 7 flags)";
    ++cases;
    if (!a.error.empty()) {
      std::fprintf(stderr, "FAIL %s\n  %s\n  replay: --%s %" PRIu64 "\n", description.c_str(), a.error.c_str(),
                   haul ? "haul" : "case", case_seed);
      if (!dump.empty()) std::ofstream(dump, std::ios::binary).write((const char*)image.data(), image.size());
      return 1;
    }
    if (one_case && !set.verbose) std::printf("%s\n", description.c_str());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("fuzz: %" PRIu64 " cases (%" PRIu64 " run twice), %" PRIu64 " frames in %.1f s: %" PRIu64
              " complete, %" PRIu64 " cut by the instruction budget, %" PRIu64 " jammed, %" PRIu64 " past 2^31 colour "
              "clocks (%" PRIu64 " of them ended by a TIA write); most bus accesses in a frame %" PRIu64
              " (bound %" PRIu64 "); failures 0\n",
              cases, repeats, g_frames.load(), seconds, g_complete.load(), g_budget.load(), g_jammed.load(),
              g_wrapped.load(), g_wrapped_ended.load(), g_max_accesses.load(), kMaxAccessesPerFrame);
  std::printf("frames by image:");
  for (int k = 0; k < (int)Kind::kCount; ++k)
    std::printf(" %s %" PRIu64 ";", kind_name((Kind)k), g_kind_frames[k].load());
  std::printf("\nframes by mapper:");
  for (size_t k = 0; k < mappers().size(); ++k)
    std::printf(" %s %" PRIu64 ";", mappers()[k].name, g_mapper_frames[k].load());
  std::printf("\n");
  return 0;
}
