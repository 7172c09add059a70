// The console: one environment's machine state, the 6507's bus, and ALE's
// frame loop (TIA::update). Upstream: Stella's System.cxx, Console.cxx and
// TIA.cxx as ALE 0.12.1 vendors them.
#pragma once

#include "cart/carts.hpp"
#include "common.hpp"
#include "chips/cpu6507.hpp"
#include "chips/render_log.hpp"
#include "chips/riot.hpp"
#include "chips/tia.hpp"

namespace cule {

constexpr uint32_t kFrameInstructionBudget = 25000;  // TIA::update runs at most this many

// The console's inputs as the chips see them; the ALE layer derives them
// from actions (joystick or paddles, swapped ports) before each frame.
struct Controls {
  TiaInputs tia;              // INPT0-5
  uint8_t swcha;              // SWCHA pins, 1 = released
  uint8_t console_reset;      // RESET switch held
  uint8_t console_select;     // SELECT switch held
  uint8_t difficulty_events;  // bit 0 left A, 1 left B, 2 right A, 3 right B
};

// The console's own registers, after its chips in Machine.
#define CULE_MACHINE_FIELDS(X)                                                     \
  X(uint32_t, cycles)       /* system clock, CPU cycles since the frame started */ \
  X(uint32_t, rng_position) /* draws taken from the system RNG since power-on */   \
  X(uint8_t, data_bus)      /* last byte on the data bus (TIA read noise) */       \
  X(uint8_t, switches)      /* Switches::read()'s stateful byte */                 \
  X(uint8_t, stop)          /* the TIA asked the CPU to stop after this instruction */

// Everything one environment needs, as plain data.
struct Machine {
  Cpu6507 cpu;
  Riot riot;
  Tia tia;
  CartState cart;
  Controls controls;
  CULE_MACHINE_FIELDS(CULE_DECLARE_FIELD)
  uint8_t pad_;
};

// What all environments of a batch share, read-only.
struct RomView {
  const uint8_t* image;
  const uint32_t* rng_draws;  // std::mt19937(4753849) outputs, in order
  uint32_t rng_count;
  TiaConfig tia;              // after NTSC/PAL detection
  uint8_t initial_switches;   // from the difficulty and TV-type properties
  // The code maps, laid out as CodeMap<Cart>::build writes them. Only host
  // code reads them (the launch shim's too).
  const uint16_t* code_maps;
};

// The system RNG (std::mt19937 seeded 4753849): identical in every
// environment, so the draws are precomputed once and each machine keeps
// only its position in the sequence.
struct SystemRng {
  const RomView& rom;
  Machine& m;
  CULE_HD uint32_t next() {
    const uint32_t v = rom.rng_draws[m.rng_position % rom.rng_count];
    ++m.rng_position;
    return v;
  }
};

// Switches::read(): difficulty and colour bits change only on an event.
CULE_HD uint8_t read_switches(Machine& m) {
  uint8_t s = m.switches;
  const uint8_t e = m.controls.difficulty_events;
  if (e & 0x4) s |= 0x80;
  else if (e & 0x8) s &= (uint8_t)~0x80;
  if (e & 0x1) s |= 0x40;
  else if (e & 0x2) s &= (uint8_t)~0x40;
  s = m.controls.console_select ? (uint8_t)(s & ~0x02) : (uint8_t)(s | 0x02);
  s = m.controls.console_reset ? (uint8_t)(s & ~0x01) : (uint8_t)(s | 0x01);
  m.switches = s;
  return s;
}

// Why a frame's instruction loop pauses after an instruction.
enum : uint8_t {
  kHaltFrame = tia::kEndsFrame,  // the TIA ended the frame (VSYNC, or the scanline cap)
  kHaltLine = tia::kEndsLine,    // a WSYNC write: the end of the CPU's work on a scanline (device)
  kHaltJam = 4,    // a JAM opcode: the CPU is dead until the next reset
};

// Reads and writes of the TIA and the RIOT's ports and timer: plain
// functions of their arguments, out of line on the host, so the opcode
// switch that inlines every other access stays small and its registers
// never have their address taken.
CULE_IO uint8_t io_peek(Machine& m, uint8_t* frame, FrameRecorder* recorder, uint16_t address, uint32_t cycles,
                        uint8_t data_bus, int32_t due) {
  if (address & 0x0080) {
    // Switches::read() runs only for SWCHB reads: it updates its byte.
    riot::Ports ports{m.controls.swcha, (address & 0x07) == 2 ? read_switches(m) : (uint8_t)0};
    return riot::peek(m.riot, address, cycles, ports);
  }
  if (recorder) recorder->read(cycles);
  return tia::peek(m.tia, frame, address, cycles, data_bus, m.controls.tia, due);
}
// A RIOT write's result says nothing but `due`, unchanged.
#if CULE_DEVICE_CODE
CULE_IO
#else
CULE_RARE
#endif
tia::PokeResult io_poke_any(Machine& m, uint8_t* frame, FrameRecorder* recorder, uint16_t address, uint8_t v,
                            uint32_t cycles, bool after_read, int32_t due) {
  if (address & 0x0080) {
    riot::poke(m.riot, address, v, cycles);
    return tia::PokeResult{0, due, 0};
  }
  if (recorder) recorder->write(cycles, address, v, after_read);
  return tia::poke(m.tia, frame, address, v, cycles, after_read, due);
}
#if !CULE_DEVICE_CODE
// TIA register r's write: a direct call if r is one of W (tested in order),
// else the jump through tia::kPokes.
template <int W, int... Rest>
CULE_HOT tia::PokeResult poke_register_of(uint8_t r, Tia& t, uint8_t* frame, uint16_t address, uint8_t v,
                                          uint32_t cycles, bool after_read, int32_t due) {
  if (r == W) return tia::poke_one<W>(t, frame, address, v, cycles, after_read, due);
  if constexpr (sizeof...(Rest) > 0)
    return poke_register_of<Rest...>(r, t, frame, address, v, cycles, after_read, due);
  else
    return tia::kPokes[r](t, frame, address, v, cycles, after_read, due);
}
#endif
// On the host a TIA write calls its register's own function (tia::kPokes);
// RIOT writes and recorded frames take the general path. The three enable
// registers are reached by direct calls: kernels that point the stack at
// them write ENABL, ENAM1 and ENAM0 in turn from one PHP instruction, and
// one jump through the table, which predicts its last target, missed every
// time (pong: 1,156 a step, all of them).
CULE_HOT tia::PokeResult io_poke(Machine& m, uint8_t* frame, FrameRecorder* recorder, uint16_t address, uint8_t v,
                                 uint32_t cycles, bool after_read, int32_t due) {
#if !CULE_DEVICE_CODE
  if (CULE_LIKELY(!(address & 0x0080) && !recorder))
    return poke_register_of<tia::reg::ENABL, tia::reg::ENAM1, tia::reg::ENAM0>(address & 0x3F, m.tia, frame, address,
                                                                              v, cycles, after_read, due);
#endif
  return io_poke_any(m, frame, recorder, address, v, cycles, after_read, due);
}

// Timer waits. `LDA INTIM; BNE` and its kin (LDX, LDY or BIT of INTIM or
// TIMINT, any branch) spin until the RIOT's timer runs out: an eighth of
// ms_pacman's instructions, changing nothing but the clock and the register
// read. Called when such a branch has just been taken back to the read, this
// applies at once every further turn whose read has no side effect (the timer
// has not expired) and whose branch is taken again; the turn that leaves the
// loop or finds the timer expired runs as usual. The loop's five bytes must
// be plain ROM reads in one page (`loop`, else null), and the frame's
// instruction budget `left` must outlast the turns skipped, so the budget,
// the clock, the data bus (the branch's offset byte, last read by every turn)
// and the registers end as if each instruction had run.
constexpr uint16_t kTimerWaitBytes = 5;  // an absolute read (3) and a branch (2)
struct TimerWait {
  Cpu6507 regs;
  uint32_t cycles;
  uint32_t instructions;  // two per turn skipped
};

CULE_RARE TimerWait skip_timer_wait(const Riot& riot, const uint8_t* loop, Cpu6507 regs, uint32_t cycles,
                                    uint32_t left) {
  TimerWait w{regs, cycles, 0};
  if (!loop) return w;
  const uint8_t opcode = loop[0], branch = loop[3];
  const uint16_t address = (uint16_t)(loop[1] | (loop[2] << 8));
  if ((address & 0x1284) != 0x0284) return w;  // not the RIOT's timer ($284-$287 and mirrors)
  cpu::ReadOp op;
  switch (opcode) {
    case 0xAD: op = cpu::ReadOp::LDA; break;
    case 0xAE: op = cpu::ReadOp::LDX; break;
    case 0xAC: op = cpu::ReadOp::LDY; break;
    case 0x2C: op = cpu::ReadOp::BIT; break;
    default: return w;
  }
  // An absolute read charges 4 cycles before its access; the taken branch 3,
  // or 4 when it crosses a page. The turns whose reads fall in one interval
  // of the timer read one count, so they are taken or left together.
  const uint32_t turn = cpu::crosses_page((uint16_t)(regs.pc + 5), regs.pc) ? 8 : 7;
  uint32_t turns = left >= 2 ? (left - 2) / 2 : 0;
  uint32_t delta = riot::timer_delta(riot, cycles + 4);
  while (turns) {
    const int32_t count = riot::running_count(riot, delta);
    if (count < 0) break;
    cpu::apply_read(regs, op, (address & 0x01) ? (uint8_t)0 : (uint8_t)count);  // TIMINT reads 0 until expiry
    if (!cpu::branch_taken(branch, regs.p)) break;
    const uint32_t interval_end = ((delta >> riot.interval_shift) + 1) << riot.interval_shift;
    uint32_t same = (interval_end - delta + turn - 1) / turn;
    if (same > turns) same = turns;
    w.regs = regs;
    w.cycles += same * turn;
    w.instructions += 2 * same;
    delta += same * turn;
    turns -= same;
  }
  return w;
}

// The stores the code map gives a label per TIA register: X(kind, opcode,
// addressing mode, StoreOp). Their address is the instruction's operand.
// Zero-page stores only: the absolute ones are rare, and 135 more labels
// cost g++ a register of the frame loop (the status byte went to the stack).
#define CULE_TIA_STORE_KINDS(X) \
  X(0, 0x85, Zp, STA) X(1, 0x86, Zp, STX) X(2, 0x84, Zp, STY)
#define CULE_COUNT_ONE(...) +1
constexpr uint32_t kTiaStoreKinds = 0 CULE_TIA_STORE_KINDS(CULE_COUNT_ONE);
// The TIA's write registers, VSYNC ($00) to CXCLR ($2C), each X(register, args...).
#define CULE_TIA_WRITE_ROW(h, X, ...)                                                                       \
  X(0x##h##0, __VA_ARGS__) X(0x##h##1, __VA_ARGS__) X(0x##h##2, __VA_ARGS__) X(0x##h##3, __VA_ARGS__)      \
  X(0x##h##4, __VA_ARGS__) X(0x##h##5, __VA_ARGS__) X(0x##h##6, __VA_ARGS__) X(0x##h##7, __VA_ARGS__)      \
  X(0x##h##8, __VA_ARGS__) X(0x##h##9, __VA_ARGS__) X(0x##h##A, __VA_ARGS__) X(0x##h##B, __VA_ARGS__)
#define CULE_TIA_WRITE_REGISTERS(X, ...)                                                                    \
  CULE_TIA_WRITE_ROW(0, X, __VA_ARGS__) X(0x0C, __VA_ARGS__) X(0x0D, __VA_ARGS__) X(0x0E, __VA_ARGS__)     \
  X(0x0F, __VA_ARGS__) CULE_TIA_WRITE_ROW(1, X, __VA_ARGS__) X(0x1C, __VA_ARGS__) X(0x1D, __VA_ARGS__)     \
  X(0x1E, __VA_ARGS__) X(0x1F, __VA_ARGS__) CULE_TIA_WRITE_ROW(2, X, __VA_ARGS__) X(0x2C, __VA_ARGS__)
static_assert(0 CULE_TIA_WRITE_REGISTERS(CULE_COUNT_ONE, _) == tia::reg::CXCLR + 1, "one entry per write register");

// The code window: whether the instruction at pc reads its three bytes
// (opcode and operands) from plain ROM, the common case, which
// CodeWindow<Cart> runs. A mapper whose every read goes through its peek
// (FE, and E0 on the device) has none.
//
// The code map folds that test into the opcode fetch of the host's threaded
// loop. It holds, for each pc, the opcode there when the instruction lies in
// the window, else kOutside: one load then both picks the opcode's label and
// sends an instruction outside the window to its own, where a compare and a
// branch per instruction did it before. Built once per ROM
// (MapperOps::code_maps), in one of two layouts:
//  - one 4K page of direct reads (2K, 4K, F8, F6, their SC variants, DPC):
//    for each 4K block of the image, kEntries entries indexed by
//    pc & kIndexMask, whose half with A12 clear is all kOutside;
//  - 1K pages of different banks (E0, kPaged): for each 1K slice of the
//    image, 8K entries indexed by pc & 0x1FFF as if that slice filled every
//    page (the half with A12 clear all kOutside). The fetch picks the slice
//    of pc's page from the bus's direct pages, as a ROM read does, so the
//    bus keeps one pointer, as for one 4K page.
template <class Cart>
struct CodeMap {
  static constexpr bool kWindow = !CULE_DEVICE_CODE && Cart::kDirectHi - Cart::kDirectLo > 2;
  // One compare: A12 clear leaves the masked pc below 0x1000, so the
  // subtraction wraps it far past the window (no second branch on A12).
  CULE_HD static bool in_window(uint16_t pc) {
    return (uint16_t)((pc & (0x1000 | Cart::kOffsetMask)) - (0x1000 + Cart::kDirectLo)) <
           (uint16_t)(Cart::kDirectHi - Cart::kDirectLo - 2);
  }
  static constexpr bool kPaged = Cart::kPageShift < 12;
  static constexpr uint32_t kPageBytes = 1u << Cart::kPageShift;
  static constexpr uint32_t kPages = 0x1000u >> Cart::kPageShift;  // of the cartridge's 4K
#ifdef CULE_TRACE_ACCESS  // tracing builds see every opcode fetch as a bus read
  static constexpr bool kUsed = false;
#else
  static constexpr bool kUsed = kWindow;
#endif
  static constexpr uint32_t kIndexMask = kPaged ? kPageBytes - 1 : 0x1000u | Cart::kOffsetMask;
  static constexpr uint32_t kEntries = kIndexMask + 1;
  static constexpr uint16_t kOutside = 256;
  // A store whose bytes name a TIA register (CULE_TIA_STORE_KINDS) has
  // an entry per kind and register, kTiaStores + kind * kTiaRegisters +
  // register: its label calls that register's write directly, with no address
  // decode and no jump through tia::kPokes, and the jump after it predicts
  // what follows that one write rather than any store of its opcode.
  static constexpr uint16_t kTiaStores = 257;
  static constexpr uint32_t kTiaRegisters = tia::reg::CXCLR + 1;
  static constexpr uint32_t kEntryValues = kTiaStores + kTiaStoreKinds * kTiaRegisters;
  // The entry of the instruction at `i` (in the window) of a block whose
  // bytes from i on hold its operands.
  CULE_HD static uint16_t entry(const uint8_t* block, uint32_t i) {
    const uint8_t opcode = block[i & Cart::kOffsetMask];
    const uint16_t operand = (uint16_t)(block[(i + 1) & Cart::kOffsetMask] | (block[(i + 2) & Cart::kOffsetMask] << 8));
    int kind = -1;
    uint16_t address = 0;
    switch (opcode) {
#define CULE_TIA_STORE_KIND(k, code, mode, op)                                            \
  case code:                                                                                \
    kind = k;                                                                               \
    address = cpu::Mode::mode == cpu::Mode::Zp ? (uint16_t)(operand & 0xFF) : operand;      \
    break;
      CULE_TIA_STORE_KINDS(CULE_TIA_STORE_KIND)
#undef CULE_TIA_STORE_KIND
      default: break;
    }
    // The bus's decode (ConsoleBus::poke): A12 and A7 clear select the TIA.
    if (kind < 0 || (address & 0x1080) || (address & 0x3F) >= kTiaRegisters) return opcode;
    return (uint16_t)(kTiaStores + (uint32_t)kind * kTiaRegisters + (address & 0x3F));
  }
  // The slice maps' size, and what a slice's offset in the image is multiplied by to reach its map.
  static constexpr uint32_t kSliceEntries = 0x2000;
  static constexpr uint32_t kSliceScale = kSliceEntries / kPageBytes;
  // The map (or first map) of the banks in place; `direct`: each page's base in `image`.
  CULE_HD static const uint16_t* select(const uint16_t* maps, const uint8_t* image, const uint8_t* const* direct) {
    if constexpr (kPaged) return maps;
    return maps + ((uint32_t)(direct[0] - image) >> 12) * kEntries;
  }
  CULE_HD static uint32_t at(const uint16_t* map, const uint8_t* image, const uint8_t* const* direct, uint16_t pc) {
    if constexpr (kPaged)
      return map[kSliceScale * (uint32_t)(direct[(pc >> Cart::kPageShift) & (kPages - 1)] - image) + (pc & 0x1FFFu)];
    return map[pc & kIndexMask];
  }
  // The maps of an image of `bytes` bytes, into `out` (entries(bytes) of them).
  CULE_HD static void build(const uint8_t* image, uint32_t bytes, uint16_t* out) {
    if constexpr (!kUsed) return;
    if constexpr (kPaged) {
      for (uint32_t slice = 0; slice < bytes / kPageBytes; ++slice) {
        const uint8_t* bytes_of = image + slice * kPageBytes;
        for (uint32_t pc = 0; pc < kSliceEntries; ++pc) {
          const uint32_t i = pc & (kPageBytes - 1);
          // The last two bytes' operands lie in the next page, whose slice
          // is another bank's: their label reads them through the bus.
          out[slice * kSliceEntries + pc] = !in_window((uint16_t)pc) ? kOutside
                                            : i + 2 < kPageBytes      ? entry(bytes_of, i)
                                                                      : bytes_of[i];
        }
      }
    } else {
      for (uint32_t block = 0; block < blocks(bytes); ++block)
        for (uint32_t i = 0; i < kEntries; ++i)
          out[block * kEntries + i] = in_window((uint16_t)i) ? entry(image + block * 4096u, i) : kOutside;
    }
  }
  CULE_HD static uint32_t blocks(uint32_t bytes) { return !kUsed ? 0 : bytes < 4096 ? 1 : bytes / 4096; }
  CULE_HD static uint32_t entries(uint32_t bytes) {
    if constexpr (kPaged) return !kUsed ? 0 : bytes / kPageBytes * kSliceEntries;
    return blocks(bytes) * kEntries;
  }
};

// The 2600's 13-bit address map (System.cxx, the devices' install()): A12 selects the
// cartridge; otherwise A7 selects the RIOT (A9: I/O, else RAM) over the TIA.
// The clock, the data-bus latch, the picture's catch-up target and the halt
// bits belong to the bus while an instruction loop runs (write_back() returns
// them): a local whose address is never taken, they stay in registers,
// where in the machine every byte stored to RAM could alias them.
template <class Cart>
struct ConsoleBus {
  Machine& m;
  const RomView& rom;
  const uint8_t* image;     // rom.image
  static constexpr uint32_t kPages = 0x1000u >> Cart::kPageShift;
  static constexpr uint16_t kPageMask = (uint16_t)((1u << Cart::kPageShift) - 1);
#if !CULE_DEVICE_CODE
  // Cart::direct_base of each page, what plain ROM reads see under the
  // current banks, kept from one bank switch to the next; the device, short
  // of registers, recomputes it at each read.
  const uint8_t* direct[kPages];
  const uint16_t* code;  // the code map of the banks in place (CodeMap<Cart>::kUsed)
  CULE_HOT const uint8_t* direct_page(uint16_t offset) const { return direct[offset >> Cart::kPageShift]; }
  CULE_HOT void banks_changed() {
    for (uint32_t p = 0; p < kPages; ++p) direct[p] = Cart::direct_base(m.cart, image, p);
    if constexpr (CodeMap<Cart>::kUsed) code = CodeMap<Cart>::select(rom.code_maps, image, direct);
  }
  // The threaded loop's opcode fetch: the opcode at pc, or kOutside.
  CULE_HOT uint32_t code_at(uint16_t pc) const { return CodeMap<Cart>::at(code, image, direct, pc); }
#else
  CULE_HOT const uint8_t* direct_page(uint16_t offset) const {
    return Cart::direct_base(m.cart, image, offset >> Cart::kPageShift);
  }
  CULE_HOT void banks_changed() {}
#endif
  uint8_t* frame;           // the TIA's current frame buffer, or null to skip pixels
  FrameRecorder* recorder;  // records the TIA accesses for a later render, or null
  uint32_t cycles;
  int32_t due;  // the TIA picture's catch-up target: accesses that changed nothing drawn owe it (tia::poke)
  uint8_t data_bus;
  uint8_t halt;   // kHalt* bits set by the instruction
  uint32_t left;  // instructions the frame may still run (see next_instruction)

  CULE_HD ConsoleBus(Machine& machine, const RomView& r, uint8_t* f, FrameRecorder* rec = nullptr)
      : m(machine), rom(r), image(r.image), frame(f), recorder(rec), cycles(machine.cycles),
        due(machine.tia.last_update_clock), data_bus(machine.data_bus), halt(0), left(kFrameInstructionBudget) {
    banks_changed();
  }
  CULE_HD void write_back() {
    m.cycles = cycles;
    m.data_bus = data_bus;
    m.stop = (halt & kHaltFrame) ? 1 : 0;
  }

  // Where the byte at `address` lies in the image, if it is plain ROM under the current banks.
  CULE_HOT const uint8_t* rom_byte(uint16_t address) const {
    const uint16_t offset = (uint16_t)(address & Cart::kOffsetMask);
    return direct_page(offset) + (offset & kPageMask);
  }

  // A read the caller knows to be plain ROM under the current banks.
  CULE_HOT uint8_t peek_rom(uint16_t address) {
    const uint8_t v = *rom_byte(address);
    data_bus = v;
#ifdef CULE_TRACE_ACCESS
    CULE_TRACE_ACCESS(*this, address, v, false);
#endif
    return v;
  }

  CULE_HOT uint8_t peek(uint16_t address) {
    uint8_t v;
    if (CULE_LIKELY(address & 0x1000)) {
      const uint16_t offset = (uint16_t)(address & Cart::kOffsetMask);
      if (CULE_LIKELY(cart::is_direct<Cart>(offset))) {
        return peek_rom(address);
      } else {
        v = Cart::peek(m.cart, image, address, cycles);
        banks_changed();
      }
    } else if (CULE_LIKELY((address & 0x0280) == 0x0080)) {
      v = m.riot.ram[address & 0x7F];
    } else {
      v = io_peek(m, frame, recorder, address, cycles, data_bus, due);
      if (!(address & 0x0080)) due = tia::later(due, (int32_t)(cycles * 3));
    }
    data_bus = v;
#ifdef CULE_TRACE_ACCESS  // debugging builds only: CULE_TRACE_ACCESS(bus, address, value, is_write)
    CULE_TRACE_ACCESS(*this, address, v, false);
#endif
    return v;
  }

  CULE_HOT uint8_t peek_code(uint16_t address) { return peek(address); }

  static constexpr bool kHasCodeWindow = CodeMap<Cart>::kWindow;
  CULE_HOT static bool code_window_at(uint16_t pc) { return CodeMap<Cart>::in_window(pc); }
  // The `count` bytes from pc, straight from direct_page, when they are plain
  // ROM in one page (a timer-wait loop's body, loop_back); else null.
  CULE_HOT const uint8_t* plain_bytes(uint16_t pc, uint16_t count) const {
    const uint16_t first = (uint16_t)(pc & Cart::kOffsetMask), last = (uint16_t)(first + count - 1);
    const bool plain = (pc & 0x1000) && cart::is_direct<Cart>(first) && cart::is_direct<Cart>(last) &&
                       (first >> Cart::kPageShift) == (last >> Cart::kPageShift);
    return plain ? rom_byte(pc) : nullptr;
  }
  // What an instruction run on a copy of the bus changed (step_outside_window).
  CULE_HD void continue_from(const ConsoleBus& b) {
#if !CULE_DEVICE_CODE
    for (uint32_t p = 0; p < kPages; ++p) direct[p] = b.direct[p];
    code = b.code;
    budget = b.budget;
#endif
    cycles = b.cycles;
    due = b.due;
    data_bus = b.data_bus;
    halt = b.halt;
    left = b.left;
  }

  CULE_HOT void poke(uint16_t address, uint8_t v, bool after_read) {
    if (CULE_UNLIKELY(address & 0x1000)) {
      Cart::poke(m.cart, image, address, v, cycles);
      banks_changed();
    } else if (CULE_LIKELY((address & 0x0280) == 0x0080)) {
      m.riot.ram[address & 0x7F] = v;
    } else {
      apply_tia_write(io_poke(m, frame, recorder, address, v, cycles, after_read, due));
    }
    data_bus = v;
#ifdef CULE_TRACE_ACCESS
    CULE_TRACE_ACCESS(*this, address, v, true);
#endif
  }

#if !CULE_DEVICE_CODE
  // A write the code map knows to be TIA register W's (CodeMap::kTiaStores),
  // with no recorder: poke's TIA branch without the decode.
  template <int W>
  CULE_HOT void poke_tia(uint8_t v) {
    apply_tia_write(tia::poke_one<W>(m.tia, frame, (uint16_t)W, v, cycles, true, due));
    data_bus = v;
  }
#endif

  // What a TIA write did to the CPU: WSYNC's stall, the catch-up still owed, a halt.
  CULE_HOT void apply_tia_write(const tia::PokeResult& w) {
    cycles += w.stall_cycles();
    due = w.due();
    if (const uint8_t h = halts_of(w)) halt_after_instruction(h);
  }

  // The halt bits of a TIA write. A WSYNC ends the scanline's loop only on
  // the device, where a warp regroups there. The host's loop runs on, so its
  // threaded dispatch jumps to each scanline's first instruction from the
  // label that wrote WSYNC, not from the loop's one entry jump, which every
  // scanline's start shared (ms_pacman: 712 of its 760 jumps a step mispredicted).
  CULE_HOT static uint8_t halts_of(const tia::PokeResult& w) {
#if CULE_DEVICE_CODE
    return w.ends();
#else
    return w.ends() & kHaltFrame;
#endif
  }
  CULE_HOT void tick(uint32_t n) { cycles += n; }
  CULE_HOT void jam() { halt_after_instruction(kHaltJam); }
  CULE_HOT void loop_back(Cpu6507& c) {
    const TimerWait w = skip_timer_wait(m.riot, plain_bytes(c.pc, kTimerWaitBytes), c, cycles, left);
    c = w.regs;
    cycles = w.cycles;
    left -= w.instructions;
  }
  // Whether the scanline's instruction loop goes on after an instruction,
  // which counts against the frame's budget `left`. On the host the loop
  // tests the count alone: a halt cuts `left` to 1 and keeps the rest in
  // `budget`, which resume() puts back. The device, short of registers,
  // tests both.
#if !CULE_DEVICE_CODE
  uint32_t budget;
  CULE_HOT void halt_after_instruction(uint8_t bits) {
    if (!halt) {
      budget = left - 1;
      left = 1;
    }
    halt |= bits;
  }
  CULE_HOT bool next_instruction() { return --left != 0; }
  CULE_HOT void resume() {
    if (halt) left = budget;
  }
#else
  CULE_HOT void halt_after_instruction(uint8_t bits) { halt |= bits; }
  CULE_HOT bool next_instruction() { return --left && !halt; }
  CULE_HOT void resume() {}
#endif
};

// The bus as an instruction whose bytes lie in plain ROM (code_window_at)
// sees it: its opcode and operand reads skip the address decode, most of what
// an emulated instruction's fetches cost on the host. The frame loop's one
// bus; an instruction outside the window sees it as its ConsoleBus.
// Mappers without a window (kHasCodeWindow false) run every instruction on
// it as on their ConsoleBus.
template <class Cart>
struct CodeWindow : ConsoleBus<Cart> {
  using Base = ConsoleBus<Cart>;
  using Base::Base;
  // Whether the instruction at pc runs on this bus (else step_outside_window).
  CULE_HOT static bool runs_at(uint16_t pc) { return !Base::kHasCodeWindow || Base::code_window_at(pc); }
  CULE_HOT uint8_t peek_code(uint16_t address) {
    return Base::kHasCodeWindow ? this->peek_rom(address) : this->peek(address);
  }
};

// An instruction outside the code window (in RAM, next to a mapper's
// hotspots, at the end of the ROM's address range), run out of line on a
// copy of the bus, the registers passing through the machine: rare, and kept
// out of the opcode switch the window runs so that the switch holds only the
// common paths.
template <class Cart>
CULE_RARE ConsoleBus<Cart> step_outside_window(ConsoleBus<Cart> bus) {
  Cpu6507 regs = bus.m.cpu;
  cpu::step(regs, bus);
  bus.m.cpu = regs;
  return bus;
}
// Field by field, each through an empty asm statement: g++ would otherwise
// merge the byte copies into one word and carry the loop's registers packed
// in it, unpacking them at every instruction.
CULE_HOT void copy_registers(Cpu6507& to, const Cpu6507& from) {
#if CULE_DEVICE_CODE
#define CULE_COPY_FIELD(type, name) to.name = from.name;
#else
#define CULE_COPY_FIELD(type, name) \
  {                                 \
    type v = from.name;             \
    asm("" : "+r"(v));              \
    to.name = v;                    \
  }
#endif
  CULE_CPU_FIELDS(CULE_COPY_FIELD)
#undef CULE_COPY_FIELD
}

// The loop's side of step_outside_window: the registers pass through m.
template <class Cart>
CULE_HOT void run_outside_window(Machine& m, Cpu6507& c, ConsoleBus<Cart>& bus) {
  copy_registers(m.cpu, c);
  bus.continue_from(step_outside_window(bus));
  copy_registers(c, m.cpu);
}
template <class Cart>
CULE_HOT void run_outside_window(Machine& m, cpu::LazyFlags& c, ConsoleBus<Cart>& bus) {
  copy_registers(m.cpu, cpu::plain_of(c));
  bus.continue_from(step_outside_window(bus));
  copy_registers(c, m.cpu);
  cpu::load_status(c, c.p);
}

// The frame loop's registers: in the host's threaded loop with C, N and Z
// apart from P (cpu::LazyFlags), elsewhere with P whole.
template <bool kLazy>
struct LoopRegisters {
  using type = Cpu6507;
  CULE_HOT static Cpu6507 of(const Cpu6507& c) { return c; }
};
template <>
struct LoopRegisters<true> {
  using type = cpu::LazyFlags;
  CULE_HOT static cpu::LazyFlags of(const Cpu6507& c) { return cpu::lazy_of(c); }
};

#if !CULE_DEVICE_CODE
// ASL, ROL, LSR, ROR, DEC and INC at an absolute address, plain or
// X-indexed ($0E, $1E ... $7E, $CE, $DE, $EE, $FE).
constexpr bool modifies_absolute(uint8_t opcode) {
  return (opcode & 0x0F) == 0x0E && ((opcode >> 4) < 0x8 || (opcode >> 4) > 0xB);
}

// An opcode's base cycles, as opcodes.inc lists them.
constexpr uint8_t base_cycles(uint8_t opcode) {
  switch (opcode) {
#define CULE_OPCODE(code, cycles, ...) \
  case code: return cycles;
#include "chips/opcodes.inc"
#undef CULE_OPCODE
  }
  return 0;
}

// The label of store `code` to TIA register W (CodeMap::kTiaStores): the
// store's operand bytes are skipped, not read, since the map holds what they
// say; a frame being recorded takes the store as usual.
template <int W, uint8_t code, cpu::Mode M, cpu::StoreOp op, class Regs, class Bus>
CULE_HOT void store_to_tia(Regs& c, Bus& bus) {
  bus.tick(base_cycles(code));
  if (CULE_UNLIKELY(bus.recorder != nullptr)) return cpu::store_op<M, op>(c, bus);
  c.pc = (uint16_t)(c.pc + (M == cpu::Mode::Zp ? 1 : 2));
  static_assert(op == cpu::StoreOp::STA || op == cpu::StoreOp::STX || op == cpu::StoreOp::STY,
                "a store whose value needs its address is not mapped (CULE_TIA_STORE_KINDS)");
  bus.template poke_tia<W>(cpu::stored_value<op>(c, 0));
}

#ifdef CULE_TRANSLATED
// A game's translated frame loop (python -m cule.translate, docs/translation.md): one label per ROM byte
// the game was seen to run, built into a library of its own. Opcode `code`'s body, as the threaded loop's
// label runs it after the fetch.
template <int code, class Regs, class Bus>
CULE_HOT void run_opcode(Regs& c, Bus& bus) {
  using namespace cpu;
  using M = Mode;
  using R = ReadOp;
  using S = StoreOp;
  using W = ModifyOp;
#define CULE_OPCODE(op, cycles, ...) \
  if constexpr (code == op) {        \
    bus.data_bus = op;               \
    bus.tick(cycles);                \
    __VA_ARGS__;                     \
  }
#include "chips/opcodes.inc"
#undef CULE_OPCODE
}

// The body of code map entry `entry` (CodeMap): an opcode's, or a TIA
// store's as its label in the threaded loop runs it.
template <int entry, class Cart, class Regs, class Bus>
CULE_HOT void run_entry(Regs& c, Bus& bus) {
  if constexpr (entry < 256) {
    run_opcode<entry>(c, bus);
  } else {
    constexpr int kKind = (entry - CodeMap<Cart>::kTiaStores) / (int)CodeMap<Cart>::kTiaRegisters;
    constexpr int kRegister = (entry - CodeMap<Cart>::kTiaStores) % (int)CodeMap<Cart>::kTiaRegisters;
#define CULE_TR_STORE(k, code, mode, op) \
  if constexpr (kKind == k) store_to_tia<kRegister, code, cpu::Mode::mode, cpu::StoreOp::op>(c, bus);
    CULE_TIA_STORE_KINDS(CULE_TR_STORE)
#undef CULE_TR_STORE
  }
}
#endif
#endif

#if defined(CULE_TRANSLATED) || defined(CULE_TRANSLATION_TRACE)
// Where the instruction at `pc` (in the cartridge's window) sits in the image: its offset in a 2K or 4K
// image, its bank's base plus its offset in a 4K bank (F8, F6 and their SuperChip variants), under the banks
// in place.
template <class Cart, class Bus>
CULE_HOT uint32_t translated_key(const Bus& bus, uint16_t pc) {
  if constexpr (Cart::kRomBytes > 0x1000) {
    return (uint32_t)(bus.direct[0] - bus.image) + (pc & 0xFFFu);
  } else {
    return pc & (Cart::kRomBytes - 1u);
  }
}
#endif

namespace console {

// Frame buffers: two per machine (current and previous), each height x 160.
CULE_HD uint8_t* current_buffer(const Machine& m, uint8_t* buffers) {
  if (!buffers) return nullptr;
  return buffers + (uint32_t)m.tia.current_buffer * m.tia.config.height * kScreenWidth;
}

// System::resetCycles: every device forgets the elapsed cycles, in attach
// order (RIOT, TIA, cartridge), then the clock restarts at 0.
template <class Cart>
CULE_HD void reset_cycles(Machine& m) {
  riot::rebase_cycles(m.riot, m.cycles);
  tia::rebase_cycles(m.tia, m.cycles);
  Cart::rebase_cycles(m.cart, m.cycles);
  m.cycles = 0;
}

// System::reset: clocks, then RIOT, TIA, cartridge,
// then the CPU reads the reset vector.
template <class Cart>
CULE_HD void system_reset(Machine& m, const RomView& rom, const TiaConfig& tia_config, uint8_t* buffers) {
  reset_cycles<Cart>(m);
  SystemRng rng{rom, m};
  riot::reset(m.riot, rng.next());
  tia::reset(m.tia, tia_config, m.cycles);
  if (buffers)
    for (uint32_t i = 0; i < 2u * tia_config.height * kScreenWidth; ++i) buffers[i] = 0;
  Cart::reset(m.cart, rng, m.cycles);
  ConsoleBus<Cart> bus{m, rom, nullptr};
  cpu::reset(m.cpu, bus);
  m.cycles = bus.cycles;
  m.data_bus = bus.data_bus;
}

// TIA::startFrame: swap buffers and restart the clock on the current line.
template <class Cart>
CULE_HD void start_frame(Machine& m) {
  const uint32_t phase = (m.cycles * 3 - (uint32_t)m.tia.frame_start_clock) % kClocksPerLine;
  reset_cycles<Cart>(m);
  tia::begin_frame(m.tia, phase);
}

// One ALE frame: TIA::update. `buffers` may be null when
// nobody will look at this frame; everything but the pixels still happens.
// With a recorder, the pixels are left to a later tia::replay of what it
// records.
template <class Cart>
CULE_FRAME void run_frame(Machine& m, const RomView& rom, uint8_t* buffers, FrameRecorder* recorder = nullptr) {
  if (!m.tia.partial_frame) start_frame<Cart>(m);
  m.tia.partial_frame = 1;
  m.stop = 0;
  if (recorder) recorder->begin(m.tia);
  // The CPU's registers, too, are copied out of m for the loop (see ConsoleBus).
  using Registers = LoopRegisters<CULE_THREADED_DISPATCH && ConsoleBus<Cart>::kHasCodeWindow>;
  typename Registers::type c = Registers::of(m.cpu);
  CodeWindow<Cart> bus{m, rom, recorder ? nullptr : current_buffer(m, buffers), recorder};
#ifdef CULE_TRACE_FRAME  // the SIMT model's hooks (benchmarks/simt_driver.cpp); compiled out otherwise
  CULE_TRACE_FRAME();
#endif
#ifdef CULE_TRACE_INSTRUCTION
#define CULE_INSTRUCTION_DONE() CULE_TRACE_INSTRUCTION()
#else
#define CULE_INSTRUCTION_DONE() (void)0
#endif
  while (bus.left && !(bus.halt & (kHaltFrame | kHaltJam)) && !c.jammed) {
    // On the device, one scanline's instructions, up to a WSYNC write: the
    // threads of a GPU warp leave this inner loop together, so the warp
    // regroups at every scanline instead of drifting apart for the whole
    // frame (python -m cule.benchmarks.simt measures the difference). On the
    // host, the frame's instructions up to a halt (halts_of).
    bus.halt = 0;
#if CULE_THREADED_DISPATCH
    // Threaded only where a code window decides which bus an instruction
    // runs on: with every fetch decoding its address (FE), g++ keeps the
    // accumulator and the status byte of the threaded loop on the stack, and
    // pong ran 25% slower than with the switch before 2K and 4K had a window
    // (docs/benchmarks.md).
    if constexpr (ConsoleBus<Cart>::kHasCodeWindow) {
      // cpu::step's cases as labels, each ending in its own fetch and jump
      // to the next opcode's label: the loop below, unrolled into every case.
      using namespace cpu;
      using M = Mode;
      using R = ReadOp;
      using S = StoreOp;
      using W = ModifyOp;
#define CULE_HANDLER(code) &&op_##code,
#define CULE_TIA_STORE_HANDLER(w, k, ...) &&tia_store_##k##_##w,
#define CULE_TIA_STORE_HANDLERS(k, ...) CULE_TIA_WRITE_REGISTERS(CULE_TIA_STORE_HANDLER, k)
      static const void* const kHandlers[CodeMap<Cart>::kEntryValues] = {
          CULE_OPCODE_BYTES(CULE_HANDLER) &&outside_map, CULE_TIA_STORE_KINDS(CULE_TIA_STORE_HANDLERS)};
#undef CULE_TIA_STORE_HANDLERS
#undef CULE_TIA_STORE_HANDLER
#undef CULE_HANDLER
#ifdef CULE_TRANSLATED
      // The translated labels by image offset (null: not translated). An
      // instruction whose successor is not known when it is generated (RTS,
      // RTI, BRK, JMP indirect, a branch or jump to an untranslated byte)
      // looks here first, then falls back to the code map.
      static const void* const kTranslated[] = {
#include "translated_table.inc"
      };
#ifdef CULE_TRANSLATED_CHECKED  // every direct jump checks the pc it assumed (tests)
#define CULE_TR_CHECK(key) \
  if (translated_key<Cart>(bus, c.pc) != (key) || !(c.pc & 0x1000)) __builtin_trap();
#else
#define CULE_TR_CHECK(key)
#endif
#define CULE_TR_IN_BANK(b) (bus.direct[0] == bus.image + (b) * 0x1000)
#define CULE_TR_FALLBACK()                                             \
  {                                                                    \
    if (c.pc & 0x1000) {                                               \
      if (const void* to_ = kTranslated[translated_key<Cart>(bus, c.pc)]) goto* to_; \
    }                                                                  \
    CULE_DISPATCH();                                                   \
  }
#else
#define CULE_TR_FALLBACK() CULE_DISPATCH()
#endif
      // In the loops of the mappers that switch 4K banks (F8, F6, their SC
      // variants, DPC), g++ 12 spilled the fetched pc as 16 bits and read it
      // back as 64 for the map's index: a load wider than the store before
      // it, which store-to-load forwarding cannot serve, in 145-162 of the
      // 392 labels. The empty asm keeps it a 32-bit value (ms_pacman: 11%
      // less CPU time, docs/benchmarks.md). In 2K's and 4K's loops only the
      // read-modify-writes at absolute addresses had such a load; in all of
      // 2K's labels the asm cost registers (pong 7% slower), so there it
      // stands in those labels alone (kWidePc, redefined in each label).
      // tests/test_dispatch_build.py looks for wide reloads in every loop.
      // The goto after the wide branch is dead there; written as an else, it
      // changed the scheduling of those loops, which were timed as they are.
      constexpr bool kWideLoop = Cart::kRomBytes > 0x1000 && !CodeMap<Cart>::kPaged;
      constexpr bool kWidePc = kWideLoop;
      // With a code map the fetch's one load also tests the window (CodeMap).
      // E0 keeps the compare before it: without, g++ packed the 6507's
      // registers into one and sent every label through one shared jump.
#define CULE_DISPATCH()                                                   \
  if constexpr (CodeMap<Cart>::kUsed) {                                   \
    if (CodeMap<Cart>::kPaged && CULE_UNLIKELY(!bus.runs_at(c.pc))) goto outside_window; \
    if constexpr (kWidePc) {                                              \
      uint32_t fetched_at = c.pc++;                                       \
      asm("" : "+r"(fetched_at));                                         \
      goto* kHandlers[bus.code_at((uint16_t)fetched_at)];                 \
    }                                                                     \
    goto* kHandlers[bus.code_at(c.pc++)];                                 \
  } else {                                                                \
    if (CULE_UNLIKELY(!bus.runs_at(c.pc))) goto outside_window;           \
    goto* kHandlers[fetch(c, bus)];                                       \
  }
#define CULE_NEXT()                                        \
  CULE_INSTRUCTION_DONE();                                 \
  if (!bus.next_instruction()) goto scanline_done;         \
  CULE_TR_FALLBACK()
      CULE_TR_FALLBACK();
// The fetch through the map left the data bus as it was (a kOutside fetch
// must); the label, which knows its opcode, puts it there.
#define CULE_OPCODE(code, cycles, ...)                                                     \
  op_##code : {                                                                            \
    constexpr bool kWidePc = kWideLoop || (!CodeMap<Cart>::kPaged && modifies_absolute(code)); \
    if constexpr (CodeMap<Cart>::kUsed) bus.data_bus = code;                               \
    bus.tick(cycles);                                                                      \
    __VA_ARGS__;                                                                           \
    CULE_NEXT();                                                                           \
  }
#include "chips/opcodes.inc"
#undef CULE_OPCODE
#define CULE_TIA_STORE_LABEL(w, k, code, mode, op)    \
  tia_store_##k##_##w:                                \
  store_to_tia<w, code, M::mode, S::op>(c, bus);      \
  CULE_NEXT();
#define CULE_TIA_STORE_LABELS(k, code, mode, op) CULE_TIA_WRITE_REGISTERS(CULE_TIA_STORE_LABEL, k, code, mode, op)
      CULE_TIA_STORE_KINDS(CULE_TIA_STORE_LABELS)
#undef CULE_TIA_STORE_LABELS
#undef CULE_TIA_STORE_LABEL
#ifdef CULE_TRANSLATED
#include "translated_labels.inc"
#undef CULE_TR_CHECK
#undef CULE_TR_IN_BANK
#endif
    outside_map:  // the map's kOutside: the fetch is undone, the instruction runs as below
      --c.pc;
    outside_window:
      run_outside_window(m, c, bus);
      CULE_NEXT();
#undef CULE_NEXT
#undef CULE_DISPATCH
#undef CULE_TR_FALLBACK
    scanline_done:;
    } else
#endif
    do {
      if (CULE_LIKELY(bus.runs_at(c.pc))) {
        cpu::step(c, bus);
      } else {
        run_outside_window(m, c, bus);
      }
      CULE_INSTRUCTION_DONE();
    } while (bus.next_instruction());
    bus.resume();
  }
#undef CULE_INSTRUCTION_DONE
  bus.write_back();
  m.cpu = cpu::plain_of(c);
  tia::settle(m.tia, bus.frame, bus.due);
  m.tia.current_scanline = (int32_t)tia::scanlines(m.tia, m.cycles);
  const bool grey = m.tia.partial_frame && !m.tia.frame_greyed;
  if (grey) tia::grey_out(m.tia, bus.frame, m.cycles);
  if (recorder) recorder->end(m.cycles, grey);
  if (m.tia.partial_frame) {
    m.tia.frame_greyed = 1;
  } else {
    m.tia.scanline_count_last_frame = m.tia.current_scanline;
    m.tia.frame_greyed = 0;
  }
}

// The Console constructor (Console.cxx): RAM from the system RNG,
// the RIOT's own reset, cartridge power-on state; then, unless the format is
// fixed, 60 NTSC frames decide PAL: at least 15 of frames 30-59 longer than
// 285 lines. Returns whether the ROM runs as PAL. Ends with System::reset
// under the final display settings, which the caller passes in `final`
// (computed from the returned format) through a second call to system_reset.
template <class Cart>
CULE_HD bool power_on_detect_pal(Machine& m, const RomView& rom, const TiaConfig& ntsc, bool detect,
                                 const Controls& idle) {
  Machine zero{};
  m = zero;
  m.controls = idle;  // no event is set while the console is built
  SystemRng rng{rom, m};
  for (int i = 0; i < 128; ++i) m.riot.ram[i] = (uint8_t)rng.next();
  riot::reset(m.riot, rng.next());
  Cart::power_on(m.cart, rng);
  m.switches = rom.initial_switches;
  if (!detect) return false;
  system_reset<Cart>(m, rom, ntsc, nullptr);
  int long_frames = 0;
  for (int i = 0; i < 60; ++i) {
    run_frame<Cart>(m, rom, nullptr);
    if (i >= 30 && tia::scanlines(m.tia, m.cycles) > 285) ++long_frames;
  }
  return long_frames >= 15;
}

}  // namespace console
}  // namespace cule
