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

template <class Regs, class Bus>
CULE_HOT uint8_t read(Regs&, Bus& bus, uint16_t address) {
  return bus.peek(address);
}

template <class Regs, class Bus>
CULE_HOT void write(Regs&, Bus& bus, uint16_t address, uint8_t v, bool after_read = true) {
  bus.poke(address, v, after_read);
}

// The instruction's next byte (its opcode, then its operands).
template <class Regs, class Bus>
CULE_OP uint8_t fetch(Regs& c, Bus& bus) {
  return bus.peek_code(c.pc++);
}

template <class Regs, class Bus>
CULE_OP uint16_t fetch_word(Regs& c, Bus& bus) {
  uint16_t lo = fetch(c, bus);
  uint16_t hi = fetch(c, bus);
  return (uint16_t)(lo | (hi << 8));
}

// A zero-page pointer's high byte comes from pointer+1 without wrapping, so
// pointer $FF reads $0100 (M6502Low); on a 2600 $0000 and $0100 are both TIA.
template <class Regs, class Bus>
CULE_OP uint16_t read_pointer(Regs& c, Bus& bus, uint8_t pointer) {
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
template <Mode M, bool kReadPenalty, class Regs, class Bus>
CULE_OP uint16_t operand_address(Regs& c, Bus& bus) {
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

// The status flags in two forms behind one set of functions. Cpu6507 keeps
// P whole. LazyFlags, the registers of the host's threaded loop, keeps C, N
// and Z apart from P: carry, and nz, the value that last set N and Z (Z
// when its low byte is 0, N when its bit 7 or 8 is set; bit 8 holds an N
// that came without its value, from PLP or BIT). Most instructions then
// store a value or two instead of updating P. LazyFlags's own C, N and Z bits
// of P mean nothing; status() puts P together, and the loop turns the
// registers back into a Cpu6507 (plain_of) wherever they leave it.
struct LazyFlags : Cpu6507 {
  uint16_t nz;
  uint8_t carry;
};

CULE_OP uint8_t status(const Cpu6507& c) { return c.p; }
CULE_OP uint8_t status(const LazyFlags& c) {
  return (uint8_t)((c.p & ~(flag::N | flag::Z | flag::C)) | ((c.nz & 0x180) ? flag::N : 0) |
                   ((c.nz & 0xFF) ? 0 : flag::Z) | (c.carry ? flag::C : 0));
}
// PLP/RTI: bits 4 and 5 of the pulled byte are ignored, both read back as 1.
CULE_OP void load_status(Cpu6507& c, uint8_t v) { c.p = v | flag::B | flag::U; }
CULE_OP void load_status(LazyFlags& c, uint8_t v) {
  c.p = v | flag::B | flag::U;
  c.nz = (uint16_t)(((v & flag::Z) ? 0 : 1) | ((v & flag::N) ? 0x100 : 0));
  c.carry = v & flag::C;
}
CULE_OP LazyFlags lazy_of(const Cpu6507& c) {
  LazyFlags l;
  static_cast<Cpu6507&>(l) = c;
  load_status(l, c.p);
  return l;
}
CULE_OP Cpu6507 plain_of(const Cpu6507& c) { return c; }
CULE_OP Cpu6507 plain_of(const LazyFlags& c) {
  Cpu6507 plain = c;
  plain.p = status(c);
  return plain;
}

CULE_OP bool has_flag(const Cpu6507& c, uint8_t f) { return (c.p & f) != 0; }
CULE_OP bool has_flag(const LazyFlags& c, uint8_t f) {
  if (f == flag::N) return (c.nz & 0x180) != 0;
  if (f == flag::Z) return (c.nz & 0xFF) == 0;
  if (f == flag::C) return c.carry != 0;
  return (c.p & f) != 0;
}
CULE_OP void set_flag(Cpu6507& c, uint8_t f, bool on) { c.p = on ? (c.p | f) : (c.p & ~f); }
CULE_OP void set_flag(LazyFlags& c, uint8_t f, bool on) {
  if (f == flag::C) {
    c.carry = on;
  } else if (f & (flag::N | flag::Z)) {  // decimal ARR's
    const uint8_t p = status(c);
    load_status(c, on ? (p | f) : (p & ~f));
  } else {
    c.p = on ? (c.p | f) : (c.p & ~f);
  }
}
CULE_OP void set_nz(Cpu6507& c, uint8_t v) { c.p = (uint8_t)((c.p & ~(flag::N | flag::Z)) | nz_of(v)); }
CULE_OP void set_nz(LazyFlags& c, uint8_t v) { c.nz = v; }
// N, Z and C in one update of P (a shift, a compare).
CULE_OP void set_nzc(Cpu6507& c, uint8_t v, bool carry) {
  c.p = (uint8_t)((c.p & ~(flag::N | flag::Z | flag::C)) | nz_of(v) | (carry ? flag::C : 0));
}
CULE_OP void set_nzc(LazyFlags& c, uint8_t v, bool carry) {
  c.nz = v;
  c.carry = carry;
}
// Binary ADC: N and Z of r; `cv` holds C (bit 0) and V (bit 6).
CULE_OP void set_nzcv(Cpu6507& c, uint8_t r, uint8_t cv) {
  c.p = (uint8_t)((c.p & ~(flag::N | flag::Z | flag::C | flag::V)) | nz_of(r) | cv);
}
CULE_OP void set_nzcv(LazyFlags& c, uint8_t r, uint8_t cv) {
  c.nz = r;
  c.carry = cv & flag::C;
  c.p = (uint8_t)((c.p & ~flag::V) | (cv & flag::V));
}
// BIT: N and V are bits 7 and 6 of the operand, Z says whether A & m is 0.
CULE_OP void set_bit_flags(Cpu6507& c, uint8_t m) {
  c.p = (uint8_t)((c.p & ~(flag::N | flag::V | flag::Z)) | (m & (flag::N | flag::V)) | ((c.a & m) ? 0 : flag::Z));
}
CULE_OP void set_bit_flags(LazyFlags& c, uint8_t m) {
  c.nz = (uint16_t)((c.a & m) | ((m & flag::N) << 1));
  c.p = (uint8_t)((c.p & ~flag::V) | (m & flag::V));
}

// Stella's BCD tables, applied to any byte: $FF counts as 15*10+15 = 165.
CULE_OP int bcd_value(uint8_t b) { return (b >> 4) * 10 + (b & 0x0F); }
CULE_OP uint8_t to_bcd(int t) { return (uint8_t)((((t % 100) / 10) << 4) | (t % 10)); }

template <class Regs>
CULE_OP void adc(Regs& c, uint8_t m) {
  const int carry = has_flag(c, flag::C) ? 1 : 0;
  const uint8_t old_a = c.a;
  if (!has_flag(c, flag::D)) {
    // The signed sum overflows when both operands' signs differ from the result's.
    const uint32_t sum = (uint32_t)old_a + m + (uint32_t)carry;
    const uint8_t r = (uint8_t)sum;
    c.a = r;
    set_nzcv(c, r, (uint8_t)((sum >> 8) | (((old_a ^ r) & (m ^ r) & 0x80) >> 1)));
  } else {
    const int sum = bcd_value(old_a) + bcd_value(m) + carry;
    c.a = to_bcd(sum & 0xFF);
    set_flag(c, flag::C, sum > 99);
    set_nz(c, c.a);  // from the BCD result, unlike NMOS
    set_flag(c, flag::V, ((old_a ^ c.a) & 0x80) && ((c.a ^ m) & 0x80));
  }
}

template <class Regs>
CULE_OP void sbc(Regs& c, uint8_t m) {
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

template <class Regs>
CULE_OP void compare(Regs& c, uint8_t reg, uint8_t m) { set_nzc(c, (uint8_t)(reg - m), reg >= m); }

template <class Regs>
CULE_OP void arr(Regs& c, uint8_t m) {
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

template <class Regs>
CULE_OP void apply_read(Regs& c, ReadOp op, uint8_t m) {
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
      set_bit_flags(c, m);
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
template <class Regs>
CULE_OP uint8_t apply_modify(Regs& c, ModifyOp op, uint8_t m) {
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

template <Mode M, ReadOp op, class Regs, class Bus>
CULE_OP void read_op(Regs& c, Bus& bus) {
  const uint8_t m = M == Mode::Imm ? fetch(c, bus) : read(c, bus, operand_address<M, true>(c, bus));
  apply_read(c, op, m);
}

// The byte store `op` writes. SHA/SHX/SHY/TAS and their h1: the high byte of
// the final, already indexed address, plus one.
template <StoreOp op, class Regs>
CULE_OP uint8_t stored_value(Regs& c, uint8_t h1) {
  switch (op) {
    case StoreOp::STA: return c.a;
    case StoreOp::STX: return c.x;
    case StoreOp::STY: return c.y;
    case StoreOp::SAX: return c.a & c.x;
    case StoreOp::SHA: return c.a & c.x & h1;
    case StoreOp::SHX: return c.x & h1;
    case StoreOp::SHY: return c.y & h1;
    case StoreOp::TAS: c.sp = c.a & c.x; return c.a & c.x & h1;
  }
  return 0;
}

template <Mode M, StoreOp op, class Regs, class Bus>
CULE_OP void store_op(Regs& c, Bus& bus) {
  const uint16_t address = operand_address<M, false>(c, bus);
  write(c, bus, address, stored_value<op>(c, (uint8_t)((address >> 8) + 1)));
}

template <Mode M, ModifyOp op, class Regs, class Bus>
CULE_OP void modify_op(Regs& c, Bus& bus) {
  const uint16_t address = operand_address<M, false>(c, bus);
  const uint8_t m = read(c, bus, address);
  write(c, bus, address, apply_modify(c, op, m));
}

// The bus's loop_back takes the registers as a Cpu6507.
template <class Bus>
CULE_OP void loop_back(Cpu6507& c, Bus& bus) {
  bus.loop_back(c);
}
template <class Bus>
CULE_OP void loop_back(LazyFlags& c, Bus& bus) {
  Cpu6507 plain = plain_of(c);
  bus.loop_back(plain);
  c = lazy_of(plain);
}

template <class Regs, class Bus>
CULE_OP void branch(Regs& c, Bus& bus, bool taken) {
  const int8_t offset = (int8_t)fetch(c, bus);
  if (!taken) return;
  const uint16_t target = (uint16_t)(c.pc + offset);
  bus.tick(crosses_page(c.pc, target) ? 2 : 1);
  c.pc = target;
  if (offset == -5) loop_back(c, bus);
}

// A branch opcode's condition: bits 7-6 pick N, V, C or Z, bit 5 the value
// that takes the branch.
CULE_OP bool branch_taken(uint8_t opcode, uint8_t p) {
  const uint8_t flags = (uint8_t)(0x02014080u >> ((opcode >> 6) * 8));  // N, V, C, Z
  return ((p & flags) != 0) == ((opcode & 0x20) != 0);
}

template <class Regs, class Bus>
CULE_OP void push(Regs& c, Bus& bus, uint8_t v, bool after_read = true) {
  write(c, bus, (uint16_t)(0x0100 + c.sp), v, after_read);
  c.sp--;
}

// The 6502 pre-increments on pull; Stella first reads the current slot.
template <class Regs, class Bus>
CULE_OP uint8_t pull(Regs& c, Bus& bus) {
  c.sp++;
  return read(c, bus, (uint16_t)(0x0100 + c.sp));
}

template <class Regs, class Bus>
CULE_OP void stack_pad_read(Regs& c, Bus& bus) {
  read(c, bus, (uint16_t)(0x0100 + c.sp));
}

template <class Regs, class Bus>
CULE_OP void brk(Regs& c, Bus& bus) {
  fetch(c, bus);  // padding byte
  push(c, bus, (uint8_t)(c.pc >> 8));
  push(c, bus, (uint8_t)c.pc, false);
  push(c, bus, status(c), false);
  c.p |= flag::I;
  uint16_t lo = read(c, bus, 0xFFFE);
  uint16_t hi = read(c, bus, 0xFFFF);
  c.pc = (uint16_t)(lo | (hi << 8));
}

template <class Regs, class Bus>
CULE_OP void jsr(Regs& c, Bus& bus) {
  const uint16_t lo = fetch(c, bus);
  stack_pad_read(c, bus);
  push(c, bus, (uint8_t)(c.pc >> 8));  // pushes the address of the high byte
  push(c, bus, (uint8_t)c.pc, false);
  const uint16_t hi = fetch(c, bus);
  c.pc = (uint16_t)(lo | (hi << 8));
}

template <class Regs, class Bus>
CULE_OP void rts(Regs& c, Bus& bus) {
  stack_pad_read(c, bus);
  uint16_t lo = pull(c, bus);
  uint16_t hi = pull(c, bus);
  c.pc = (uint16_t)(lo | (hi << 8));
  read(c, bus, c.pc++);  // skip the byte JSR's pushed address points at (not this instruction's byte)
}

template <class Regs, class Bus>
CULE_OP void rti(Regs& c, Bus& bus) {
  stack_pad_read(c, bus);
  load_status(c, pull(c, bus));
  uint16_t lo = pull(c, bus);
  uint16_t hi = pull(c, bus);
  c.pc = (uint16_t)(lo | (hi << 8));
}

template <class Regs, class Bus>
CULE_OP void jmp_indirect(Regs& c, Bus& bus) {
  const uint16_t pointer = fetch_word(c, bus);
  // The NMOS bug: the high byte comes from the start of the pointer's page.
  const uint16_t hi_at = (pointer & 0xFF) == 0xFF ? (uint16_t)(pointer & 0xFF00) : (uint16_t)(pointer + 1);
  uint16_t lo = read(c, bus, pointer);
  uint16_t hi = read(c, bus, hi_at);
  c.pc = (uint16_t)(lo | (hi << 8));
}

// A JAM opcode ($02 $12 ... $F2): the CPU stays dead until reset.
template <class Regs, class Bus>
CULE_OP void jam(Regs& c, Bus& bus) {
  c.jammed = 1;
  bus.jam();
}

// The 256 opcodes in order, spelled as opcodes.inc spells them: the threaded
// dispatch's table of handlers (console::run_frame) is made from it.
#define CULE_OPCODE_ROW(X, h)                                                                          \
  X(0x##h##0) X(0x##h##1) X(0x##h##2) X(0x##h##3) X(0x##h##4) X(0x##h##5) X(0x##h##6) X(0x##h##7)      \
  X(0x##h##8) X(0x##h##9) X(0x##h##A) X(0x##h##B) X(0x##h##C) X(0x##h##D) X(0x##h##E) X(0x##h##F)
#define CULE_OPCODE_BYTES(X)                                                                           \
  CULE_OPCODE_ROW(X, 0) CULE_OPCODE_ROW(X, 1) CULE_OPCODE_ROW(X, 2) CULE_OPCODE_ROW(X, 3)              \
  CULE_OPCODE_ROW(X, 4) CULE_OPCODE_ROW(X, 5) CULE_OPCODE_ROW(X, 6) CULE_OPCODE_ROW(X, 7)              \
  CULE_OPCODE_ROW(X, 8) CULE_OPCODE_ROW(X, 9) CULE_OPCODE_ROW(X, A) CULE_OPCODE_ROW(X, B)              \
  CULE_OPCODE_ROW(X, C) CULE_OPCODE_ROW(X, D) CULE_OPCODE_ROW(X, E) CULE_OPCODE_ROW(X, F)

// Executes one instruction. A jammed CPU does nothing and charges no cycles:
// the callers' loops stop at bus.jam() and never step it.
template <class Regs, class Bus>
CULE_OP void step(Regs& c, Bus& bus) {
  using M = Mode;
  using R = ReadOp;
  using S = StoreOp;
  using W = ModifyOp;
  switch (fetch(c, bus)) {
#define CULE_OPCODE(code, cycles, ...) \
  case code:                           \
    bus.tick(cycles);                  \
    __VA_ARGS__;                       \
    break;
#include "opcodes.inc"
#undef CULE_OPCODE
  }
}

}  // namespace cpu
}  // namespace cule
