// The 6507 as ALE runs it: Stella's "low compatibility" 6502 core (M6502Low).
//
// What this file reproduces (Stella's M6502Low.cxx and the M6502.m4 opcode
// definitions it includes, as vendored by ALE 0.12.1):
//  - the whole instruction's base cycles are charged right after the opcode
//    fetch, so every later bus access sees end-of-instruction time;
//  - +1 cycle when a read through abs,X / abs,Y / (zp),Y crosses a page, charged
//    just before the final operand read; taken branches +1, +2 across a page;
//  - no NMOS dummy accesses except the stack and padding reads of
//    BRK/JSR/RTS/RTI/PLA/PLP; read-modify-write writes once, the new value;
//  - the status byte always reads back with bits 4 (B) and 5 set;
//  - decimal ADC/SBC use Stella's BCD tables, so N/V/Z differ from NMOS;
//  - the 12 JAM opcodes stop the CPU until the next reset.
//
// The bus is a template parameter with these members:
//   uint8_t peek(uint16_t address);
//   uint8_t peek_code(uint16_t address);  // the instruction's own bytes, pc to pc+2
//   void poke(uint16_t address, uint8_t v, bool after_read);
//   void tick(uint32_t cpu_cycles);   // advances the system clock
//   void jam();                       // a JAM opcode stopped the CPU
//   void loop_back(Cpu6507& c);       // a taken branch went back 5 bytes
// peek_code reads the opcode and operand bytes at pc, pc+1 and pc+2 of the
// instruction that runs; every other read (data, pointers, the stack, RTS's
// read at its new pc) goes through peek. A bus that knows those three bytes
// are plain ROM reads them without decoding the address.
// loop_back: the branch closes a loop of one 3-byte instruction and itself;
// a bus that can tell what that loop does may run further turns of it at once.
// after_read: the instruction's previous access was a read (WSYNC halts only
// then). Every instruction starts with a read, and only the second and third
// stack pushes of JSR and BRK follow a write, so the CPU knows it statically
// and nobody tracks the kind of the last access.
// Addresses are passed unmasked (16 bits): the FE mapper looks at A13. The
// bus also keeps what its accesses imply (the kind of the last one, which
// WSYNC looks at), so the registers' address is never taken: everything
// called per instruction is inlined, and the registers stay in machine
// registers.
#pragma once

#include "common.hpp"

namespace cule {

namespace flag {
enum : uint8_t { C = 0x01, Z = 0x02, I = 0x04, D = 0x08, B = 0x10, U = 0x20, V = 0x40, N = 0x80 };
}

// One CPU's registers. Plain data: copied, saved and laid out for the GPU as is.
#define CULE_CPU_FIELDS(X)                                   \
  X(uint16_t, pc)                                            \
  X(uint8_t, a)                                              \
  X(uint8_t, x)                                              \
  X(uint8_t, y)                                              \
  X(uint8_t, sp)                                             \
  X(uint8_t, p)      /* NV11DIZC: bits 4 and 5 always set */ \
  X(uint8_t, jammed) /* a JAM opcode ran; only reset clears it */

struct Cpu6507 {
  CULE_CPU_FIELDS(CULE_DECLARE_FIELD)
};
static_assert(sizeof(Cpu6507) == 8, "saved states and device arrays depend on the registers' layout");

namespace cpu {

enum class Mode : uint8_t { Imm, Zp, ZpX, ZpY, Abs, AbsX, AbsY, IndX, IndY };

// Operations that consume one operand byte.
enum class ReadOp : uint8_t {
  LDA, LDX, LDY, LAX, ORA, AND, EOR, ADC, SBC, CMP, CPX, CPY, BIT,
  NOP, LAS, ANC, ALR, ARR, ANE, LXA, SBX
};
// Operations that store a register-derived byte.
enum class StoreOp : uint8_t { STA, STX, STY, SAX, SHA, SHX, SHY, TAS };
// Read-modify-write operations (memory or accumulator).
enum class ModifyOp : uint8_t { ASL, LSR, ROL, ROR, INC, DEC, SLO, RLA, SRE, RRA, DCP, ISB };

// After the reset sequence of M6502::reset: SP=$FF and I clear (real hardware
// differs), PC from the reset vector read through the bus at no cycle cost.
template <class Bus>
CULE_HD void reset(Cpu6507& c, Bus& bus) {
  c.a = c.x = c.y = 0;
  c.sp = 0xFF;
  c.p = flag::U | flag::B;
  c.jammed = 0;
  uint16_t lo = bus.peek(0xFFFC);
  uint16_t hi = bus.peek(0xFFFD);
  c.pc = (uint16_t)(lo | (hi << 8));
}

template <class Bus>
CULE_HOT uint8_t read(Cpu6507&, Bus& bus, uint16_t address) {
  return bus.peek(address);
}

template <class Bus>
CULE_HOT void write(Cpu6507&, Bus& bus, uint16_t address, uint8_t v, bool after_read = true) {
  bus.poke(address, v, after_read);
}

// The instruction's next byte (its opcode, then its operands).
template <class Bus>
CULE_OP uint8_t fetch(Cpu6507& c, Bus& bus) {
  return bus.peek_code(c.pc++);
}

template <class Bus>
CULE_OP uint16_t fetch_word(Cpu6507& c, Bus& bus) {
  uint16_t lo = fetch(c, bus);
  uint16_t hi = fetch(c, bus);
  return (uint16_t)(lo | (hi << 8));
}

// A zero-page pointer's high byte comes from pointer+1 without wrapping, so
// pointer $FF reads $0100 (M6502Low); on a 2600 $0000 and $0100 are both TIA.
template <class Bus>
CULE_OP uint16_t read_pointer(Cpu6507& c, Bus& bus, uint8_t pointer) {
  uint16_t lo = read(c, bus, pointer);
  uint16_t hi = read(c, bus, (uint16_t)(pointer + 1));
  return (uint16_t)(lo | (hi << 8));
}

CULE_OP bool crosses_page(uint16_t a, uint16_t b) { return ((a ^ b) & 0xFF00) != 0; }

template <bool kReadPenalty, class Bus>
CULE_OP uint16_t indexed(Bus& bus, uint16_t base, uint8_t index) {
  uint16_t address = (uint16_t)(base + index);
  if (kReadPenalty && crosses_page(base, address)) bus.tick(1);
  return address;
}

// The operand address of a mode; for Imm, the address of the operand byte
// (read_op reads it as an instruction byte).
// kReadPenalty: the access is a read that pays the page-crossing cycle.
template <Mode M, bool kReadPenalty, class Bus>
CULE_OP uint16_t operand_address(Cpu6507& c, Bus& bus) {
  switch (M) {
    case Mode::Imm: return c.pc++;
    case Mode::Zp: return fetch(c, bus);
    case Mode::ZpX: return (uint8_t)(fetch(c, bus) + c.x);
    case Mode::ZpY: return (uint8_t)(fetch(c, bus) + c.y);
    case Mode::Abs: return fetch_word(c, bus);
    case Mode::AbsX: return indexed<kReadPenalty>(bus, fetch_word(c, bus), c.x);
    case Mode::AbsY: return indexed<kReadPenalty>(bus, fetch_word(c, bus), c.y);
    case Mode::IndX: return read_pointer(c, bus, (uint8_t)(fetch(c, bus) + c.x));
    case Mode::IndY: {
      uint8_t pointer = fetch(c, bus);
      return indexed<kReadPenalty>(bus, read_pointer(c, bus, pointer), c.y);
    }
  }
  return 0;
}

CULE_OP void set_flag(Cpu6507& c, uint8_t f, bool on) { c.p = on ? (c.p | f) : (c.p & ~f); }
CULE_OP bool has_flag(const Cpu6507& c, uint8_t f) { return (c.p & f) != 0; }
#if !CULE_DEVICE_CODE
// N and Z of every byte: on the host one load replaces the five operations
// computing them, in the flag update most instructions end with.
struct NzFlags {
  uint8_t of[256];
  constexpr NzFlags() : of() {
    for (int v = 0; v < 256; ++v) of[v] = (uint8_t)((v & flag::N) | (v ? 0 : flag::Z));
  }
};
inline constexpr NzFlags kNzFlags{};
#endif

CULE_OP uint8_t nz_of(uint8_t v) {
#if !CULE_DEVICE_CODE
  return kNzFlags.of[v];
#else
  return (uint8_t)((v & flag::N) | (v ? 0 : flag::Z));
#endif
}
CULE_OP void set_nz(Cpu6507& c, uint8_t v) { c.p = (uint8_t)((c.p & ~(flag::N | flag::Z)) | nz_of(v)); }
// N, Z and C in one update of P (a shift, a compare).
CULE_OP void set_nzc(Cpu6507& c, uint8_t v, bool carry) {
  c.p = (uint8_t)((c.p & ~(flag::N | flag::Z | flag::C)) | nz_of(v) | (carry ? flag::C : 0));
}
// PLP/RTI: bits 4 and 5 of the pulled byte are ignored, both read back as 1.
CULE_OP void load_status(Cpu6507& c, uint8_t v) { c.p = v | flag::B | flag::U; }

// Stella's BCD tables, applied to any byte: $FF counts as 15*10+15 = 165.
CULE_OP int bcd_value(uint8_t b) { return (b >> 4) * 10 + (b & 0x0F); }
CULE_OP uint8_t to_bcd(int t) { return (uint8_t)((((t % 100) / 10) << 4) | (t % 10)); }

CULE_OP void adc(Cpu6507& c, uint8_t m) {
  const int carry = has_flag(c, flag::C) ? 1 : 0;
  const uint8_t old_a = c.a;
  if (!has_flag(c, flag::D)) {
    // The signed sum overflows when both operands' signs differ from the result's.
    const uint32_t sum = (uint32_t)old_a + m + (uint32_t)carry;
    const uint8_t r = (uint8_t)sum;
    c.a = r;
    c.p = (uint8_t)((c.p & ~(flag::N | flag::Z | flag::C | flag::V)) | nz_of(r) | (sum >> 8) |
                    (((old_a ^ r) & (m ^ r) & 0x80) >> 1));
  } else {
    const int sum = bcd_value(old_a) + bcd_value(m) + carry;
    c.a = to_bcd(sum & 0xFF);
    set_flag(c, flag::C, sum > 99);
    set_nz(c, c.a);  // from the BCD result, unlike NMOS
    set_flag(c, flag::V, ((old_a ^ c.a) & 0x80) && ((c.a ^ m) & 0x80));
  }
}

CULE_OP void sbc(Cpu6507& c, uint8_t m) {
  if (!has_flag(c, flag::D)) {
    adc(c, (uint8_t)~m);
    return;
  }
  const int borrow = has_flag(c, flag::C) ? 0 : 1;
  const uint8_t old_a = c.a;
  int d = bcd_value(old_a) - bcd_value(m) - borrow;
  if (d < 0) d += 100;
  // Invalid BCD can leave d below zero; Stella then indexes its number->BCD
  // table out of bounds and, with the tables laid out back to back, reads the
  // byte->number table at 256+d.
  c.a = d >= 0 ? to_bcd(d) : (uint8_t)bcd_value((uint8_t)(256 + d));
  set_nz(c, c.a);
  set_flag(c, flag::C, old_a >= m + borrow);
  set_flag(c, flag::V, ((old_a ^ c.a) & 0x80) && ((c.a ^ m) & 0x80));
}

CULE_OP void compare(Cpu6507& c, uint8_t reg, uint8_t m) { set_nzc(c, (uint8_t)(reg - m), reg >= m); }

CULE_OP void arr(Cpu6507& c, uint8_t m) {
  const uint8_t carry_in = has_flag(c, flag::C) ? 0x80 : 0x00;
  const uint8_t value = c.a & m;
  c.a = (uint8_t)((value >> 1) | carry_in);
  if (!has_flag(c, flag::D)) {
    set_nz(c, c.a);
    set_flag(c, flag::C, c.a & 0x40);
    set_flag(c, flag::V, ((c.a >> 6) ^ (c.a >> 5)) & 1);
    return;
  }
  // Decimal ARR as Stella has it from 64doc: N copies the old carry, Z and V
  // come from the shifted value before the BCD fix-ups.
  set_flag(c, flag::N, carry_in);
  set_flag(c, flag::Z, c.a == 0);
  set_flag(c, flag::V, (value ^ c.a) & 0x40);
  if ((value & 0x0F) + (value & 0x01) > 0x05) c.a = (uint8_t)((c.a & 0xF0) | ((c.a + 0x06) & 0x0F));
  const bool high_fix = (value & 0xF0) + (value & 0x10) > 0x50;
  if (high_fix) c.a = (uint8_t)(c.a + 0x60);
  set_flag(c, flag::C, high_fix);
}

CULE_OP void apply_read(Cpu6507& c, ReadOp op, uint8_t m) {
  switch (op) {
    case ReadOp::LDA: c.a = m; set_nz(c, m); break;
    case ReadOp::LDX: c.x = m; set_nz(c, m); break;
    case ReadOp::LDY: c.y = m; set_nz(c, m); break;
    case ReadOp::LAX: c.a = c.x = m; set_nz(c, m); break;
    case ReadOp::ORA: c.a |= m; set_nz(c, c.a); break;
    case ReadOp::AND: c.a &= m; set_nz(c, c.a); break;
    case ReadOp::EOR: c.a ^= m; set_nz(c, c.a); break;
    case ReadOp::ADC: adc(c, m); break;
    case ReadOp::SBC: sbc(c, m); break;
    case ReadOp::CMP: compare(c, c.a, m); break;
    case ReadOp::CPX: compare(c, c.x, m); break;
    case ReadOp::CPY: compare(c, c.y, m); break;
    case ReadOp::BIT:  // N and V are bits 7 and 6 of the operand
      c.p = (uint8_t)((c.p & ~(flag::N | flag::V | flag::Z)) | (m & (flag::N | flag::V)) | ((c.a & m) ? 0 : flag::Z));
      break;
    case ReadOp::NOP: break;
    case ReadOp::LAS: c.a = c.x = c.sp = c.sp & m; set_nz(c, c.a); break;
    case ReadOp::ANC: c.a &= m; set_nz(c, c.a); set_flag(c, flag::C, c.a & 0x80); break;
    case ReadOp::ALR:
      c.a &= m;
      set_flag(c, flag::C, c.a & 0x01);
      c.a >>= 1;
      set_nz(c, c.a);
      break;
    case ReadOp::ARR: arr(c, m); break;
    // ANE and LXA are unstable on silicon; Stella fixes the magic constant at $EE.
    case ReadOp::ANE: c.a = (uint8_t)((c.a | 0xEE) & c.x & m); set_nz(c, c.a); break;
    case ReadOp::LXA: c.a = c.x = (uint8_t)((c.a | 0xEE) & m); set_nz(c, c.a); break;
    case ReadOp::SBX: {
      const uint16_t diff = (uint16_t)((c.a & c.x) - m);
      c.x = (uint8_t)diff;
      set_nz(c, c.x);
      set_flag(c, flag::C, !(diff & 0x100));
      break;
    }
  }
}

// Returns the byte written back; applies the flag and register side effects.
CULE_OP uint8_t apply_modify(Cpu6507& c, ModifyOp op, uint8_t m) {
  const bool carry_in = has_flag(c, flag::C);
  uint8_t r = m;
  bool carry = carry_in;  // the shift's carry out
  switch (op) {
    case ModifyOp::ASL: case ModifyOp::SLO: r = (uint8_t)(m << 1); carry = m & 0x80; break;
    case ModifyOp::LSR: case ModifyOp::SRE: r = (uint8_t)(m >> 1); carry = m & 0x01; break;
    case ModifyOp::ROL: case ModifyOp::RLA: r = (uint8_t)((m << 1) | (carry_in ? 1 : 0)); carry = m & 0x80; break;
    case ModifyOp::ROR: case ModifyOp::RRA: r = (uint8_t)((m >> 1) | (carry_in ? 0x80 : 0)); carry = m & 0x01; break;
    case ModifyOp::INC: case ModifyOp::ISB: r = (uint8_t)(m + 1); break;
    case ModifyOp::DEC: case ModifyOp::DCP: r = (uint8_t)(m - 1); break;
  }
  switch (op) {
    // The documented ones: N, Z and C in one update of P.
    case ModifyOp::ASL: case ModifyOp::LSR: case ModifyOp::ROL: case ModifyOp::ROR: set_nzc(c, r, carry); break;
    case ModifyOp::INC: case ModifyOp::DEC: set_nz(c, r); break;
    // The undocumented ones apply a second operation with the shift's carry in.
    case ModifyOp::SLO: set_flag(c, flag::C, carry); c.a |= r; set_nz(c, c.a); break;
    case ModifyOp::RLA: set_flag(c, flag::C, carry); c.a &= r; set_nz(c, c.a); break;
    case ModifyOp::SRE: set_flag(c, flag::C, carry); c.a ^= r; set_nz(c, c.a); break;
    case ModifyOp::RRA: set_flag(c, flag::C, carry); adc(c, r); break;
    case ModifyOp::ISB: sbc(c, r); break;
    case ModifyOp::DCP: compare(c, c.a, r); break;
  }
  return r;
}

template <Mode M, ReadOp op, class Bus>
CULE_OP void read_op(Cpu6507& c, Bus& bus) {
  const uint8_t m = M == Mode::Imm ? fetch(c, bus) : read(c, bus, operand_address<M, true>(c, bus));
  apply_read(c, op, m);
}

template <Mode M, StoreOp op, class Bus>
CULE_OP void store_op(Cpu6507& c, Bus& bus) {
  const uint16_t address = operand_address<M, false>(c, bus);
  // SHA/SHX/SHY/TAS: H is the high byte of the final, already indexed address.
  const uint8_t h1 = (uint8_t)((address >> 8) + 1);
  uint8_t v = 0;
  switch (op) {
    case StoreOp::STA: v = c.a; break;
    case StoreOp::STX: v = c.x; break;
    case StoreOp::STY: v = c.y; break;
    case StoreOp::SAX: v = c.a & c.x; break;
    case StoreOp::SHA: v = c.a & c.x & h1; break;
    case StoreOp::SHX: v = c.x & h1; break;
    case StoreOp::SHY: v = c.y & h1; break;
    case StoreOp::TAS: c.sp = c.a & c.x; v = c.a & c.x & h1; break;
  }
  write(c, bus, address, v);
}

template <Mode M, ModifyOp op, class Bus>
CULE_OP void modify_op(Cpu6507& c, Bus& bus) {
  const uint16_t address = operand_address<M, false>(c, bus);
  const uint8_t m = read(c, bus, address);
  write(c, bus, address, apply_modify(c, op, m));
}

template <class Bus>
CULE_OP void branch(Cpu6507& c, Bus& bus, bool taken) {
  const int8_t offset = (int8_t)fetch(c, bus);
  if (!taken) return;
  const uint16_t target = (uint16_t)(c.pc + offset);
  bus.tick(crosses_page(c.pc, target) ? 2 : 1);
  c.pc = target;
  if (offset == -5) bus.loop_back(c);
}

// A branch opcode's condition: bits 7-6 pick N, V, C or Z, bit 5 the value
// that takes the branch.
CULE_OP bool branch_taken(uint8_t opcode, uint8_t p) {
  const uint8_t flags = (uint8_t)(0x02014080u >> ((opcode >> 6) * 8));  // N, V, C, Z
  return ((p & flags) != 0) == ((opcode & 0x20) != 0);
}

template <class Bus>
CULE_OP void push(Cpu6507& c, Bus& bus, uint8_t v, bool after_read = true) {
  write(c, bus, (uint16_t)(0x0100 + c.sp), v, after_read);
  c.sp--;
}

// The 6502 pre-increments on pull; Stella first reads the current slot.
template <class Bus>
CULE_OP uint8_t pull(Cpu6507& c, Bus& bus) {
  c.sp++;
  return read(c, bus, (uint16_t)(0x0100 + c.sp));
}

template <class Bus>
CULE_OP void stack_pad_read(Cpu6507& c, Bus& bus) {
  read(c, bus, (uint16_t)(0x0100 + c.sp));
}

template <class Bus>
CULE_OP void brk(Cpu6507& c, Bus& bus) {
  fetch(c, bus);  // padding byte
  push(c, bus, (uint8_t)(c.pc >> 8));
  push(c, bus, (uint8_t)c.pc, false);
  push(c, bus, c.p, false);
  c.p |= flag::I;
  uint16_t lo = read(c, bus, 0xFFFE);
  uint16_t hi = read(c, bus, 0xFFFF);
  c.pc = (uint16_t)(lo | (hi << 8));
}

template <class Bus>
CULE_OP void jsr(Cpu6507& c, Bus& bus) {
  const uint16_t lo = fetch(c, bus);
  stack_pad_read(c, bus);
  push(c, bus, (uint8_t)(c.pc >> 8));  // pushes the address of the high byte
  push(c, bus, (uint8_t)c.pc, false);
  const uint16_t hi = fetch(c, bus);
  c.pc = (uint16_t)(lo | (hi << 8));
}

template <class Bus>
CULE_OP void rts(Cpu6507& c, Bus& bus) {
  stack_pad_read(c, bus);
  uint16_t lo = pull(c, bus);
  uint16_t hi = pull(c, bus);
  c.pc = (uint16_t)(lo | (hi << 8));
  read(c, bus, c.pc++);  // skip the byte JSR's pushed address points at (not this instruction's byte)
}

template <class Bus>
CULE_OP void rti(Cpu6507& c, Bus& bus) {
  stack_pad_read(c, bus);
  load_status(c, pull(c, bus));
  uint16_t lo = pull(c, bus);
  uint16_t hi = pull(c, bus);
  c.pc = (uint16_t)(lo | (hi << 8));
}

template <class Bus>
CULE_OP void jmp_indirect(Cpu6507& c, Bus& bus) {
  const uint16_t pointer = fetch_word(c, bus);
  // The NMOS bug: the high byte comes from the start of the pointer's page.
  const uint16_t hi_at = (pointer & 0xFF) == 0xFF ? (uint16_t)(pointer & 0xFF00) : (uint16_t)(pointer + 1);
  uint16_t lo = read(c, bus, pointer);
  uint16_t hi = read(c, bus, hi_at);
  c.pc = (uint16_t)(lo | (hi << 8));
}

// Executes one instruction. A jammed CPU does nothing and charges no cycles:
// the callers' loops stop at bus.jam() and never step it.
template <class Bus>
CULE_OP void step(Cpu6507& c, Bus& bus) {
  using M = Mode;
  using R = ReadOp;
  using S = StoreOp;
  using W = ModifyOp;
  const uint8_t opcode = fetch(c, bus);
  // Base cycles are charged before anything else happens (M6502Low::execute),
  // so the operand accesses below all see the end-of-instruction clock.
  auto charge = [&](uint32_t n) { bus.tick(n); };
  switch (opcode) {
    // ---- loads
    case 0xA9: charge(2); read_op<M::Imm, R::LDA>(c, bus); break;
    case 0xA5: charge(3); read_op<M::Zp, R::LDA>(c, bus); break;
    case 0xB5: charge(4); read_op<M::ZpX, R::LDA>(c, bus); break;
    case 0xAD: charge(4); read_op<M::Abs, R::LDA>(c, bus); break;
    case 0xBD: charge(4); read_op<M::AbsX, R::LDA>(c, bus); break;
    case 0xB9: charge(4); read_op<M::AbsY, R::LDA>(c, bus); break;
    case 0xA1: charge(6); read_op<M::IndX, R::LDA>(c, bus); break;
    case 0xB1: charge(5); read_op<M::IndY, R::LDA>(c, bus); break;
    case 0xA2: charge(2); read_op<M::Imm, R::LDX>(c, bus); break;
    case 0xA6: charge(3); read_op<M::Zp, R::LDX>(c, bus); break;
    case 0xB6: charge(4); read_op<M::ZpY, R::LDX>(c, bus); break;
    case 0xAE: charge(4); read_op<M::Abs, R::LDX>(c, bus); break;
    case 0xBE: charge(4); read_op<M::AbsY, R::LDX>(c, bus); break;
    case 0xA0: charge(2); read_op<M::Imm, R::LDY>(c, bus); break;
    case 0xA4: charge(3); read_op<M::Zp, R::LDY>(c, bus); break;
    case 0xB4: charge(4); read_op<M::ZpX, R::LDY>(c, bus); break;
    case 0xAC: charge(4); read_op<M::Abs, R::LDY>(c, bus); break;
    case 0xBC: charge(4); read_op<M::AbsX, R::LDY>(c, bus); break;
    case 0xA7: charge(4); read_op<M::Zp, R::LAX>(c, bus); break;  // 4 in Stella, 3 on NMOS
    case 0xB7: charge(4); read_op<M::ZpY, R::LAX>(c, bus); break;
    case 0xAF: charge(4); read_op<M::Abs, R::LAX>(c, bus); break;
    case 0xBF: charge(4); read_op<M::AbsY, R::LAX>(c, bus); break;
    case 0xA3: charge(6); read_op<M::IndX, R::LAX>(c, bus); break;
    case 0xB3: charge(5); read_op<M::IndY, R::LAX>(c, bus); break;
    case 0xBB: charge(4); read_op<M::AbsY, R::LAS>(c, bus); break;
    case 0xAB: charge(2); read_op<M::Imm, R::LXA>(c, bus); break;
    // ---- stores
    case 0x85: charge(3); store_op<M::Zp, S::STA>(c, bus); break;
    case 0x95: charge(4); store_op<M::ZpX, S::STA>(c, bus); break;
    case 0x8D: charge(4); store_op<M::Abs, S::STA>(c, bus); break;
    case 0x9D: charge(5); store_op<M::AbsX, S::STA>(c, bus); break;
    case 0x99: charge(5); store_op<M::AbsY, S::STA>(c, bus); break;
    case 0x81: charge(6); store_op<M::IndX, S::STA>(c, bus); break;
    case 0x91: charge(6); store_op<M::IndY, S::STA>(c, bus); break;
    case 0x86: charge(3); store_op<M::Zp, S::STX>(c, bus); break;
    case 0x96: charge(4); store_op<M::ZpY, S::STX>(c, bus); break;
    case 0x8E: charge(4); store_op<M::Abs, S::STX>(c, bus); break;
    case 0x84: charge(3); store_op<M::Zp, S::STY>(c, bus); break;
    case 0x94: charge(4); store_op<M::ZpX, S::STY>(c, bus); break;
    case 0x8C: charge(4); store_op<M::Abs, S::STY>(c, bus); break;
    case 0x87: charge(3); store_op<M::Zp, S::SAX>(c, bus); break;
    case 0x97: charge(4); store_op<M::ZpY, S::SAX>(c, bus); break;
    case 0x8F: charge(4); store_op<M::Abs, S::SAX>(c, bus); break;
    case 0x83: charge(6); store_op<M::IndX, S::SAX>(c, bus); break;
    case 0x93: charge(6); store_op<M::IndY, S::SHA>(c, bus); break;
    case 0x9F: charge(5); store_op<M::AbsY, S::SHA>(c, bus); break;
    case 0x9E: charge(5); store_op<M::AbsY, S::SHX>(c, bus); break;
    case 0x9C: charge(5); store_op<M::AbsX, S::SHY>(c, bus); break;
    case 0x9B: charge(5); store_op<M::AbsY, S::TAS>(c, bus); break;
    // ---- logic and arithmetic
    case 0x09: charge(2); read_op<M::Imm, R::ORA>(c, bus); break;
    case 0x05: charge(3); read_op<M::Zp, R::ORA>(c, bus); break;
    case 0x15: charge(4); read_op<M::ZpX, R::ORA>(c, bus); break;
    case 0x0D: charge(4); read_op<M::Abs, R::ORA>(c, bus); break;
    case 0x1D: charge(4); read_op<M::AbsX, R::ORA>(c, bus); break;
    case 0x19: charge(4); read_op<M::AbsY, R::ORA>(c, bus); break;
    case 0x01: charge(6); read_op<M::IndX, R::ORA>(c, bus); break;
    case 0x11: charge(5); read_op<M::IndY, R::ORA>(c, bus); break;
    case 0x29: charge(2); read_op<M::Imm, R::AND>(c, bus); break;
    case 0x25: charge(3); read_op<M::Zp, R::AND>(c, bus); break;
    case 0x35: charge(4); read_op<M::ZpX, R::AND>(c, bus); break;
    case 0x2D: charge(4); read_op<M::Abs, R::AND>(c, bus); break;
    case 0x3D: charge(4); read_op<M::AbsX, R::AND>(c, bus); break;
    case 0x39: charge(4); read_op<M::AbsY, R::AND>(c, bus); break;
    case 0x21: charge(6); read_op<M::IndX, R::AND>(c, bus); break;
    case 0x31: charge(5); read_op<M::IndY, R::AND>(c, bus); break;
    case 0x49: charge(2); read_op<M::Imm, R::EOR>(c, bus); break;
    case 0x45: charge(3); read_op<M::Zp, R::EOR>(c, bus); break;
    case 0x55: charge(4); read_op<M::ZpX, R::EOR>(c, bus); break;
    case 0x4D: charge(4); read_op<M::Abs, R::EOR>(c, bus); break;
    case 0x5D: charge(4); read_op<M::AbsX, R::EOR>(c, bus); break;
    case 0x59: charge(4); read_op<M::AbsY, R::EOR>(c, bus); break;
    case 0x41: charge(6); read_op<M::IndX, R::EOR>(c, bus); break;
    case 0x51: charge(5); read_op<M::IndY, R::EOR>(c, bus); break;
    case 0x69: charge(2); read_op<M::Imm, R::ADC>(c, bus); break;
    case 0x65: charge(3); read_op<M::Zp, R::ADC>(c, bus); break;
    case 0x75: charge(4); read_op<M::ZpX, R::ADC>(c, bus); break;
    case 0x6D: charge(4); read_op<M::Abs, R::ADC>(c, bus); break;
    case 0x7D: charge(4); read_op<M::AbsX, R::ADC>(c, bus); break;
    case 0x79: charge(4); read_op<M::AbsY, R::ADC>(c, bus); break;
    case 0x61: charge(6); read_op<M::IndX, R::ADC>(c, bus); break;
    case 0x71: charge(5); read_op<M::IndY, R::ADC>(c, bus); break;
    case 0xE9: case 0xEB: charge(2); read_op<M::Imm, R::SBC>(c, bus); break;
    case 0xE5: charge(3); read_op<M::Zp, R::SBC>(c, bus); break;
    case 0xF5: charge(4); read_op<M::ZpX, R::SBC>(c, bus); break;
    case 0xED: charge(4); read_op<M::Abs, R::SBC>(c, bus); break;
    case 0xFD: charge(4); read_op<M::AbsX, R::SBC>(c, bus); break;
    case 0xF9: charge(4); read_op<M::AbsY, R::SBC>(c, bus); break;
    case 0xE1: charge(6); read_op<M::IndX, R::SBC>(c, bus); break;
    case 0xF1: charge(5); read_op<M::IndY, R::SBC>(c, bus); break;
    case 0xC9: charge(2); read_op<M::Imm, R::CMP>(c, bus); break;
    case 0xC5: charge(3); read_op<M::Zp, R::CMP>(c, bus); break;
    case 0xD5: charge(4); read_op<M::ZpX, R::CMP>(c, bus); break;
    case 0xCD: charge(4); read_op<M::Abs, R::CMP>(c, bus); break;
    case 0xDD: charge(4); read_op<M::AbsX, R::CMP>(c, bus); break;
    case 0xD9: charge(4); read_op<M::AbsY, R::CMP>(c, bus); break;
    case 0xC1: charge(6); read_op<M::IndX, R::CMP>(c, bus); break;
    case 0xD1: charge(5); read_op<M::IndY, R::CMP>(c, bus); break;
    case 0xE0: charge(2); read_op<M::Imm, R::CPX>(c, bus); break;
    case 0xE4: charge(3); read_op<M::Zp, R::CPX>(c, bus); break;
    case 0xEC: charge(4); read_op<M::Abs, R::CPX>(c, bus); break;
    case 0xC0: charge(2); read_op<M::Imm, R::CPY>(c, bus); break;
    case 0xC4: charge(3); read_op<M::Zp, R::CPY>(c, bus); break;
    case 0xCC: charge(4); read_op<M::Abs, R::CPY>(c, bus); break;
    case 0x24: charge(3); read_op<M::Zp, R::BIT>(c, bus); break;
    case 0x2C: charge(4); read_op<M::Abs, R::BIT>(c, bus); break;
    case 0x0B: case 0x2B: charge(2); read_op<M::Imm, R::ANC>(c, bus); break;
    case 0x4B: charge(2); read_op<M::Imm, R::ALR>(c, bus); break;
    case 0x6B: charge(2); read_op<M::Imm, R::ARR>(c, bus); break;
    case 0x8B: charge(2); read_op<M::Imm, R::ANE>(c, bus); break;
    case 0xCB: charge(2); read_op<M::Imm, R::SBX>(c, bus); break;
    // ---- read-modify-write on memory
    case 0x06: charge(5); modify_op<M::Zp, W::ASL>(c, bus); break;
    case 0x16: charge(6); modify_op<M::ZpX, W::ASL>(c, bus); break;
    case 0x0E: charge(6); modify_op<M::Abs, W::ASL>(c, bus); break;
    case 0x1E: charge(7); modify_op<M::AbsX, W::ASL>(c, bus); break;
    case 0x46: charge(5); modify_op<M::Zp, W::LSR>(c, bus); break;
    case 0x56: charge(6); modify_op<M::ZpX, W::LSR>(c, bus); break;
    case 0x4E: charge(6); modify_op<M::Abs, W::LSR>(c, bus); break;
    case 0x5E: charge(7); modify_op<M::AbsX, W::LSR>(c, bus); break;
    case 0x26: charge(5); modify_op<M::Zp, W::ROL>(c, bus); break;
    case 0x36: charge(6); modify_op<M::ZpX, W::ROL>(c, bus); break;
    case 0x2E: charge(6); modify_op<M::Abs, W::ROL>(c, bus); break;
    case 0x3E: charge(7); modify_op<M::AbsX, W::ROL>(c, bus); break;
    case 0x66: charge(5); modify_op<M::Zp, W::ROR>(c, bus); break;
    case 0x76: charge(6); modify_op<M::ZpX, W::ROR>(c, bus); break;
    case 0x6E: charge(6); modify_op<M::Abs, W::ROR>(c, bus); break;
    case 0x7E: charge(7); modify_op<M::AbsX, W::ROR>(c, bus); break;
    case 0xE6: charge(5); modify_op<M::Zp, W::INC>(c, bus); break;
    case 0xF6: charge(6); modify_op<M::ZpX, W::INC>(c, bus); break;
    case 0xEE: charge(6); modify_op<M::Abs, W::INC>(c, bus); break;
    case 0xFE: charge(7); modify_op<M::AbsX, W::INC>(c, bus); break;
    case 0xC6: charge(5); modify_op<M::Zp, W::DEC>(c, bus); break;
    case 0xD6: charge(6); modify_op<M::ZpX, W::DEC>(c, bus); break;
    case 0xCE: charge(6); modify_op<M::Abs, W::DEC>(c, bus); break;
    case 0xDE: charge(7); modify_op<M::AbsX, W::DEC>(c, bus); break;
    // The undocumented RMW family: one row of seven modes per operation.
    case 0x07: charge(5); modify_op<M::Zp, W::SLO>(c, bus); break;
    case 0x17: charge(6); modify_op<M::ZpX, W::SLO>(c, bus); break;
    case 0x0F: charge(6); modify_op<M::Abs, W::SLO>(c, bus); break;
    case 0x1F: charge(7); modify_op<M::AbsX, W::SLO>(c, bus); break;
    case 0x1B: charge(7); modify_op<M::AbsY, W::SLO>(c, bus); break;
    case 0x03: charge(8); modify_op<M::IndX, W::SLO>(c, bus); break;
    case 0x13: charge(8); modify_op<M::IndY, W::SLO>(c, bus); break;
    case 0x27: charge(5); modify_op<M::Zp, W::RLA>(c, bus); break;
    case 0x37: charge(6); modify_op<M::ZpX, W::RLA>(c, bus); break;
    case 0x2F: charge(6); modify_op<M::Abs, W::RLA>(c, bus); break;
    case 0x3F: charge(7); modify_op<M::AbsX, W::RLA>(c, bus); break;
    case 0x3B: charge(7); modify_op<M::AbsY, W::RLA>(c, bus); break;
    case 0x23: charge(8); modify_op<M::IndX, W::RLA>(c, bus); break;
    case 0x33: charge(8); modify_op<M::IndY, W::RLA>(c, bus); break;
    case 0x47: charge(5); modify_op<M::Zp, W::SRE>(c, bus); break;
    case 0x57: charge(6); modify_op<M::ZpX, W::SRE>(c, bus); break;
    case 0x4F: charge(6); modify_op<M::Abs, W::SRE>(c, bus); break;
    case 0x5F: charge(7); modify_op<M::AbsX, W::SRE>(c, bus); break;
    case 0x5B: charge(7); modify_op<M::AbsY, W::SRE>(c, bus); break;
    case 0x43: charge(8); modify_op<M::IndX, W::SRE>(c, bus); break;
    case 0x53: charge(8); modify_op<M::IndY, W::SRE>(c, bus); break;
    case 0x67: charge(5); modify_op<M::Zp, W::RRA>(c, bus); break;
    case 0x77: charge(6); modify_op<M::ZpX, W::RRA>(c, bus); break;
    case 0x6F: charge(6); modify_op<M::Abs, W::RRA>(c, bus); break;
    case 0x7F: charge(7); modify_op<M::AbsX, W::RRA>(c, bus); break;
    case 0x7B: charge(7); modify_op<M::AbsY, W::RRA>(c, bus); break;
    case 0x63: charge(8); modify_op<M::IndX, W::RRA>(c, bus); break;
    case 0x73: charge(8); modify_op<M::IndY, W::RRA>(c, bus); break;
    case 0xC7: charge(5); modify_op<M::Zp, W::DCP>(c, bus); break;
    case 0xD7: charge(6); modify_op<M::ZpX, W::DCP>(c, bus); break;
    case 0xCF: charge(6); modify_op<M::Abs, W::DCP>(c, bus); break;
    case 0xDF: charge(7); modify_op<M::AbsX, W::DCP>(c, bus); break;
    case 0xDB: charge(7); modify_op<M::AbsY, W::DCP>(c, bus); break;
    case 0xC3: charge(8); modify_op<M::IndX, W::DCP>(c, bus); break;
    case 0xD3: charge(8); modify_op<M::IndY, W::DCP>(c, bus); break;
    case 0xE7: charge(5); modify_op<M::Zp, W::ISB>(c, bus); break;
    case 0xF7: charge(6); modify_op<M::ZpX, W::ISB>(c, bus); break;
    case 0xEF: charge(6); modify_op<M::Abs, W::ISB>(c, bus); break;
    case 0xFF: charge(7); modify_op<M::AbsX, W::ISB>(c, bus); break;
    case 0xFB: charge(7); modify_op<M::AbsY, W::ISB>(c, bus); break;
    case 0xE3: charge(8); modify_op<M::IndX, W::ISB>(c, bus); break;
    case 0xF3: charge(8); modify_op<M::IndY, W::ISB>(c, bus); break;
    // ---- accumulator shifts: no bus access at all in the low core
    case 0x0A: charge(2); c.a = apply_modify(c, W::ASL, c.a); break;
    case 0x4A: charge(2); c.a = apply_modify(c, W::LSR, c.a); break;
    case 0x2A: charge(2); c.a = apply_modify(c, W::ROL, c.a); break;
    case 0x6A: charge(2); c.a = apply_modify(c, W::ROR, c.a); break;
    // ---- register transfers, increments, flags
    case 0xAA: charge(2); c.x = c.a; set_nz(c, c.x); break;
    case 0xA8: charge(2); c.y = c.a; set_nz(c, c.y); break;
    case 0x8A: charge(2); c.a = c.x; set_nz(c, c.a); break;
    case 0x98: charge(2); c.a = c.y; set_nz(c, c.a); break;
    case 0xBA: charge(2); c.x = c.sp; set_nz(c, c.x); break;
    case 0x9A: charge(2); c.sp = c.x; break;
    case 0xE8: charge(2); c.x++; set_nz(c, c.x); break;
    case 0xC8: charge(2); c.y++; set_nz(c, c.y); break;
    case 0xCA: charge(2); c.x--; set_nz(c, c.x); break;
    case 0x88: charge(2); c.y--; set_nz(c, c.y); break;
    case 0x18: charge(2); set_flag(c, flag::C, false); break;
    case 0x38: charge(2); set_flag(c, flag::C, true); break;
    case 0x58: charge(2); set_flag(c, flag::I, false); break;
    case 0x78: charge(2); set_flag(c, flag::I, true); break;
    case 0xB8: charge(2); set_flag(c, flag::V, false); break;
    case 0xD8: charge(2); set_flag(c, flag::D, false); break;
    case 0xF8: charge(2); set_flag(c, flag::D, true); break;
    // ---- no-ops: the implied ones touch nothing, the others read their operand
    case 0xEA: case 0x1A: case 0x3A: case 0x5A: case 0x7A: case 0xDA: case 0xFA: charge(2); break;
    case 0x80: case 0x82: case 0x89: case 0xC2: case 0xE2: charge(2); read_op<M::Imm, R::NOP>(c, bus); break;
    case 0x04: case 0x44: case 0x64: charge(3); read_op<M::Zp, R::NOP>(c, bus); break;
    case 0x14: case 0x34: case 0x54: case 0x74: case 0xD4: case 0xF4: charge(4); read_op<M::ZpX, R::NOP>(c, bus); break;
    case 0x0C: charge(4); read_op<M::Abs, R::NOP>(c, bus); break;
    case 0x1C: case 0x3C: case 0x5C: case 0x7C: case 0xDC: case 0xFC: charge(4); read_op<M::AbsX, R::NOP>(c, bus); break;
    // ---- branches
    case 0x10: charge(2); branch(c, bus, !has_flag(c, flag::N)); break;
    case 0x30: charge(2); branch(c, bus, has_flag(c, flag::N)); break;
    case 0x50: charge(2); branch(c, bus, !has_flag(c, flag::V)); break;
    case 0x70: charge(2); branch(c, bus, has_flag(c, flag::V)); break;
    case 0x90: charge(2); branch(c, bus, !has_flag(c, flag::C)); break;
    case 0xB0: charge(2); branch(c, bus, has_flag(c, flag::C)); break;
    case 0xD0: charge(2); branch(c, bus, !has_flag(c, flag::Z)); break;
    case 0xF0: charge(2); branch(c, bus, has_flag(c, flag::Z)); break;
    // ---- jumps and the stack
    case 0x4C: charge(3); c.pc = fetch_word(c, bus); break;
    case 0x6C: charge(5); jmp_indirect(c, bus); break;
    case 0x20: charge(6); jsr(c, bus); break;
    case 0x60: charge(6); rts(c, bus); break;
    case 0x40: charge(6); rti(c, bus); break;
    case 0x00: charge(7); brk(c, bus); break;
    case 0x48: charge(3); push(c, bus, c.a); break;
    case 0x08: charge(3); push(c, bus, c.p); break;
    case 0x68: charge(4); stack_pad_read(c, bus); c.a = pull(c, bus); set_nz(c, c.a); break;
    case 0x28: charge(4); stack_pad_read(c, bus); load_status(c, pull(c, bus)); break;
    // ---- JAM ($02 $12 ... $F2): Stella has no case for them; the fetch and
    // two cycles are charged and the CPU stays dead until reset.
    default: charge(2); c.jammed = 1; bus.jam(); break;
  }
}

}  // namespace cpu
}  // namespace cule
