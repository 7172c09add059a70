// The SIMT model behind `python -m cule.benchmarks.simt`: how many of a warp's
// 32 threads would share each emulated instruction's path on a GPU.
//
// Built by the benchmark for one game (its mapper and unit as -D options) with
// the core's trace hooks defined. It runs a warp's 32 environments through
// the vector env's steps, one environment at a time, and records for every
// emulated instruction its path: the opcode and the bus targets its accesses
// took (cartridge, RAM, TIA, RIOT). It then replays the 32 instruction
// streams of each step in lockstep under three grouping rules and reports
// the mean number of threads active per issued warp instruction, over 32:
//   step:  lanes advance together from the start of the step (no regrouping);
//   frame: lanes regroup at every frame's start (what the kernel's frame loop
//          does: a loop's exit reconverges a warp);
//   wsync: lanes also regroup at every WSYNC write (a frame loop cut into one
//          loop per scanline segment would do this).
// At each lockstep position the active lanes with equal paths run as one
// warp instruction; lanes with other paths run after them.
//
// The same run also replays the host's threaded dispatch under cachegrind's
// model of an indirect jump (valgrind's cachegrind/cg_branchpred.c: a jump
// predicts the target it took last; aliasing between jumps is left out).
// Each label ends in its own jump, so that jump mispredicts when the label
// run next differs from the one that followed this label's previous run.
// Label layouts compared, each label keyed by:
//   opcode:    the code map's entry (an opcode, or a store to one TIA register),
//              the host's loop today;
//   copies_R:  the entry and its ROM byte's rank among the equal bytes of its
//              4K block, modulo R: R copies of every label, which the code
//              map could choose with no branch;
//   next_R:    the entry and a copy chosen from the ROM's bytes by the label
//              of the instruction after it (Dispatch::build_next): R copies
//              of every label, shared by bytes whose next label is the same;
//   site:      the instruction's ROM address: a label per address.
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace cule {
template <class Cart>
struct ConsoleBus;
template <class Cart>
struct CodeMap;
}  // namespace cule

namespace simt {

enum : uint16_t { kCart = 1 << 8, kRam = 1 << 9, kTia = 1 << 10, kRiot = 1 << 11 };
constexpr uint16_t kWsync = 0xFFFF;  // a segment boundary inside a frame's stream
constexpr uint16_t kFrame = 0xFFFE;  // a frame boundary

std::vector<uint16_t>* stream = nullptr;  // the running environment's stream, or null
uint16_t pending = 0;                     // the instruction being executed
bool first_access = true, wsync = false;

// A 6507 instruction's bytes, by its opcode (the documented and the
// undocumented ones; a JAM counts one).
int instruction_length(uint8_t op) {
  const int lo = op & 0x0F, hi_odd = (op >> 4) & 1;
  switch (lo) {
    case 0x0: return op == 0x20 ? 3 : (op == 0x00 || op == 0x40 || op == 0x60) ? 1 : 2;
    case 0x2: return (op == 0x82 || op == 0xA2 || op == 0xC2 || op == 0xE2) ? 2 : 1;
    case 0x8: case 0xA: return 1;
    case 0x9: case 0xB: return hi_odd ? 3 : 2;
    case 0xC: case 0xD: case 0xE: case 0xF: return 3;
    default: return 2;
  }
}
// Whether the instruction after this one is not simply the next bytes:
// branches, jumps, calls, returns, BRK and the JAMs.
bool ends_run(uint8_t op) {
  if ((op & 0x1F) == 0x10) return true;
  if (op == 0x00 || op == 0x20 || op == 0x40 || op == 0x60 || op == 0x4C || op == 0x6C) return true;
  return (op & 0x0F) == 0x2 && instruction_length(op) == 1;
}

struct Dispatch {
  static constexpr int kCopies[] = {4, 8, 16};  // the copies_R layouts; each divides the last
  static constexpr int kMostCopies = kCopies[sizeof kCopies / sizeof kCopies[0] - 1];
  static constexpr int kNext[] = {2, 4, 8};     // the next_R layouts
  static constexpr int kNextLayouts = (int)(sizeof kNext / sizeof kNext[0]);
  // Layout 0 is opcode, then copies_R and next_R in their lists' order, the last site.
  static constexpr int kFirstNext = 1 + (int)(sizeof kCopies / sizeof kCopies[0]);
  static constexpr int kLayouts = kFirstNext + kNextLayouts + 1;
  static constexpr int kSpan = 1 << 18;  // labels of each layout: below it
  std::vector<uint8_t> rank;             // per ROM byte: its rank among equal bytes of its 4K block, mod kMostCopies
  std::vector<uint8_t> next_copy[kNextLayouts];  // per ROM byte: its copy in each next_R layout (built at first fetch)
  std::vector<int32_t> last[kLayouts];   // per label: the label that ran after it last, or -1
  int32_t previous[kLayouts];
  long jumps = 0, missed[kLayouts] = {};
  static std::string name(int layout) {
    if (layout == 0) return "opcode";
    if (layout == kLayouts - 1) return "site";
    if (layout >= kFirstNext) return "next_" + std::to_string(kNext[layout - kFirstNext]);
    return "copies_" + std::to_string(kCopies[layout - 1]);
  }
  explicit Dispatch(const std::vector<uint8_t>& image) : rank(image.size()) {
    for (size_t block = 0; block < image.size(); block += 4096) {
      uint32_t seen[256] = {};
      for (size_t i = block; i < image.size() && i < block + 4096; ++i)
        rank[i] = (uint8_t)(seen[image[i]]++ % kMostCopies);
    }
    for (int k = 0; k < kLayouts; ++k) last[k].assign(kSpan, -1), previous[k] = -1;
  }
  // next_R: what the code map could choose from the ROM's bytes alone. Each
  // byte, read as an instruction, takes the copy of its entry that the label
  // of the instruction after it (its entry and copy) has been given: bytes
  // whose next label is the same share a copy, and the entry's distinct next
  // labels take its R copies in turn. An instruction that ends a run
  // (branch, jump, return) takes its rank among its entry's bytes instead.
  template <class Map>
  void build_next(const uint8_t* image, size_t bytes) {
    const uint32_t block_bytes = bytes < 4096 ? (uint32_t)bytes : 4096u;
    for (int k = 0; k < kNextLayouts; ++k) {
      const int R = kNext[k];
      next_copy[k].assign(bytes, 0);
      for (size_t block = 0; block < bytes; block += 4096) {
        const uint8_t* b = image + block;
        std::vector<int32_t> label(block_bytes, -1);
        std::map<std::pair<int32_t, int32_t>, int> given;  // (entry, next label) -> copy
        std::vector<int> turns(1024, 0), ranks(1024, 0);
        for (int32_t i = (int32_t)block_bytes - 1; i >= 0; --i) {
          const uint32_t at = 0x1000u | (uint32_t)i;
          const int32_t entry = Map::entry(b, at);
          const uint8_t op = b[i];
          const int32_t next = i + instruction_length(op);
          int copy;
          if (ends_run(op) || next >= (int32_t)block_bytes || label[next] < 0) {
            copy = ranks[entry]++ % R;
          } else {
            auto found = given.find({entry, label[next]});
            if (found == given.end()) found = given.emplace(std::make_pair(entry, label[next]), turns[entry]++ % R).first;
            copy = found->second;
          }
          label[i] = entry * 16 + copy;
          next_copy[k][block + i] = (uint8_t)copy;
        }
      }
    }
  }
  void run(const int32_t (&labels)[kLayouts]) {
    if (previous[0] >= 0) ++jumps;
    for (int k = 0; k < kLayouts; ++k) {
      if (previous[k] >= 0) {
        int32_t& predicted = last[k][previous[k]];
        missed[k] += predicted != labels[k];
        predicted = labels[k];
      }
      previous[k] = labels[k];
    }
  }
};
Dispatch* dispatch = nullptr;

// The labels of the instruction whose opcode `value` was fetched from `address`.
template <class Cart>
void fetched(const cule::ConsoleBus<Cart>& bus, uint16_t address, uint8_t value) {
  using Map = cule::CodeMap<Cart>;
  int32_t labels[Dispatch::kLayouts];
  if (address & 0x1000) {
    const uint32_t site = (uint32_t)(bus.rom_byte(address) - bus.image);
    const uint32_t i = address & Map::kIndexMask;
    int32_t entry;
    if constexpr (Map::kPaged) entry = i + 2 < Map::kPageBytes ? Map::entry(bus.rom_byte(address) - i, i) : value;
    else entry = Map::entry(bus.image + (site & ~0xFFFu), i);
    labels[0] = entry;
    if (dispatch->next_copy[0].empty()) dispatch->build_next<Map>(bus.image, dispatch->rank.size());
    for (int k = 1; k < Dispatch::kFirstNext; ++k)
      labels[k] = entry * Dispatch::kMostCopies + dispatch->rank[site] % Dispatch::kCopies[k - 1];
    for (int k = Dispatch::kFirstNext; k < Dispatch::kLayouts - 1; ++k)
      labels[k] = entry * Dispatch::kMostCopies + dispatch->next_copy[k - Dispatch::kFirstNext][site];
    labels[Dispatch::kLayouts - 1] = 1024 + (int32_t)site;
  } else {  // code in RAM: one label per opcode in every layout
    for (int k = 0; k < Dispatch::kLayouts; ++k)
      labels[k] = k == 0 || k == Dispatch::kLayouts - 1 ? value : value * Dispatch::kMostCopies;
  }
  dispatch->run(labels);
}

template <class Bus>
void access(const Bus& bus, uint16_t address, uint8_t value, bool is_write) {
  if (!stream) return;
  if (first_access) {  // the opcode fetch
    pending = value;
    fetched(bus, address, value);
  }
  first_access = false;
  if (address & 0x1000) pending |= kCart;
  else if ((address & 0x0280) == 0x0080) pending |= kRam;
  else if (address & 0x0080) pending |= kRiot;
  else {
    pending |= kTia;
    if (is_write && (address & 0x3F) == 0x02) wsync = true;
  }
}
void instruction() {
  if (!stream) return;
  stream->push_back(pending);
  if (wsync) stream->push_back(kWsync);
  pending = 0;
  first_access = true;
  wsync = false;
}
void frame() {
  if (stream) stream->push_back(kFrame);
}

}  // namespace simt

#define CULE_TRACE_ACCESS(bus, address, value, is_write) simt::access((bus), (address), (value), (is_write))
#define CULE_TRACE_INSTRUCTION() simt::instruction()
#define CULE_TRACE_FRAME() simt::frame()

#include "ale/games/registry.hpp"
#include "host/emulator.hpp"
#include "host/fnv1a.hpp"
#include "host/mapper_unit.hpp"
#include "driver_config.hpp"

using namespace cule;

namespace {

// Lockstep replay: at each position, the active lanes and their distinct
// paths (a path is 12 bits: the opcode and four bus-target bits).
struct Tally {
  double active = 0, issued = 0;
  uint32_t stamp[1 << 12] = {};
  uint32_t now = 0;
  void lockstep(const std::vector<std::vector<uint16_t>>& segments) {
    size_t longest = 0;
    for (const auto& s : segments) longest = s.size() > longest ? s.size() : longest;
    for (size_t k = 0; k < longest; ++k) {
      ++now;
      for (const auto& s : segments)
        if (k < s.size()) {
          ++active;
          uint32_t& seen = stamp[s[k] & 0xFFF];
          if (seen != now) {
            seen = now;
            ++issued;
          }
        }
    }
  }
  double fraction() const { return issued ? active / issued / 32.0 : 0.0; }
};

// Splits each lane's stream at the markers `cut` accepts, and replays the
// pieces with equal index together.
template <class Cut>
void replay(const std::vector<std::vector<uint16_t>>& streams, Cut cut, Tally& tally) {
  std::vector<std::vector<std::vector<uint16_t>>> pieces(streams.size());
  size_t most = 0;
  for (size_t lane = 0; lane < streams.size(); ++lane) {
    pieces[lane].emplace_back();
    for (uint16_t x : streams[lane]) {
      if (x == simt::kWsync || x == simt::kFrame) {
        if (cut(x) && !pieces[lane].back().empty()) pieces[lane].emplace_back();
        continue;
      }
      pieces[lane].back().push_back(x);
    }
    most = pieces[lane].size() > most ? pieces[lane].size() : most;
  }
  for (size_t j = 0; j < most; ++j) {
    std::vector<std::vector<uint16_t>> column;
    for (const auto& p : pieces)
      if (j < p.size()) column.push_back(p[j]);
    tally.lockstep(column);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CONFIG (written by python -m cule.benchmarks.simt)\n", argv[0]);
    return 2;
  }
  const driver::Config cfg = driver::read_config(argv[1], CULE_SIMT_CART_TYPE);
  auto num = [&](const char* key) { return cfg.num(key); };
  const std::vector<uint8_t>& image = cfg.image;
  const std::vector<int>& actions = cfg.actions;
  const VectorOptions& o = cfg.options;
  const int envs = (int)num("envs"), steps = (int)num("steps");
  BasicEmulator<OneGame<games::CULE_SIMT_GAME>> emu(image, cfg.settings, 0, envs, cfg.sticky(), 0);
  emu.configure_vector(o, cfg.rgb.data(), cfg.gray.data());

  std::vector<int32_t> ids(envs);
  std::vector<int64_t> seeds(envs);
  for (int i = 0; i < envs; ++i) ids[i] = i, seeds[i] = (int64_t)num("seed") + i;
  emu.vector_run(ids.data(), envs, nullptr, seeds.data(), true, 1);

  simt::Dispatch dispatch(image);
  simt::dispatch = &dispatch;
  std::mt19937 rng((uint32_t)num("seed"));
  Tally by_step, by_frame, by_wsync;
  long frames = 0, instructions = 0, skipped = 0;
  std::vector<size_t> taken;  // the action indices, step by step, environment by environment
  for (int t = 0; t < steps; ++t) {
    std::vector<std::vector<uint16_t>> streams;
    for (int i = 0; i < envs; ++i) {
      std::vector<uint16_t> s;
      simt::stream = &s;
      taken.push_back(rng() % actions.size());
      const int32_t action = actions[taken.back()];
      emu.vector_run(&ids[i], 1, &action, nullptr, false, 1);
      simt::stream = nullptr;
      long f = 0;
      for (uint16_t x : s) f += x == simt::kFrame;
      // An episode's reset runs in cule_reset on the device, apart from the steps.
      if (f > o.frameskip) {
        ++skipped;
        continue;
      }
      frames += f;
      for (uint16_t x : s) instructions += x < simt::kFrame;
      streams.push_back(std::move(s));
    }
    replay(streams, [](uint16_t) { return false; }, by_step);
    replay(streams, [](uint16_t x) { return x == simt::kFrame; }, by_frame);
    replay(streams, [](uint16_t) { return true; }, by_wsync);
  }
  std::printf("{\"envs\": %d, \"steps\": %d, \"frames\": %ld, \"instructions\": %ld, \"reset_steps_left_out\": %ld, "
              "\"step\": %.4f, \"frame\": %.4f, \"wsync\": %.4f, \"dispatch_jumps\": %ld, \"mispredicted\": {",
              envs, steps, frames, instructions, skipped, by_step.fraction(), by_frame.fraction(),
              by_wsync.fraction(), dispatch.jumps);
  for (int k = 0; k < simt::Dispatch::kLayouts; ++k)
    std::printf("%s\"%s\": %.4f", k ? ", " : "", simt::Dispatch::name(k).c_str(),
                dispatch.jumps ? (double)dispatch.missed[k] / (double)dispatch.jumps : 0.0);
  // What the traced run emulated, for a check against the Python package:
  // the actions and each environment's last screen (FNV-1a, 64 bits).
  std::printf("}, \"action_indices\": [");
  for (size_t k = 0; k < taken.size(); ++k) std::printf("%s%zu", k ? ", " : "", taken[k]);
  std::printf("], \"screen_fnv1a\": [");
  for (int i = 0; i < envs; ++i) {
    Fnv1a h;
    h.mix(emu.screen(i), (size_t)emu.screen_height() * kScreenWidth);
    std::printf("%s\"%016llx\"", i ? ", " : "", (unsigned long long)h.hash);
  }
  std::printf("]}\n");
  return 0;
}
