// What a saved row must hold before it is loaded (restore_state). A row's
// payload goes straight into the console, the cartridge, the RNGs and the
// ring indices, so a damaged or crafted one could make the emulator index
// memory out of bounds, loop for ever, or shift or convert out of range.
// check_row finds every value the emulator itself never makes in a field
// that is used that way; every other field is loaded as it is, since any
// value of it is safe (docs/states.md lists both kinds). Host and device:
// the CPU backend checks with it on the host, the CUDA backend in
// kernels.cu's cule_check_rows, one thread per row, before either loads
// anything.
#pragma once

#include "common.hpp"
#include "state_rows.hpp"

#if !CULE_DEVICE_CODE
#include <cstddef>
#endif

namespace cule {

// X(name, part, field, rule): the faults a row can have, the payload digest
// first, then check_row's in the order it looks for them. The rules are
// those the emulator keeps; the list reaches Python as
// cule._core.state_faults (index = fault code - 1).
#define CULE_STATE_FAULTS(X)                                                                                      \
  X(kStateDigest, "header", "digest", "the sum of the payload's 32-bit words that the row was saved with")       \
  X(kTiaConfig, "machine", "tia.config", "the ROM's display settings (first line, height, scanline cap, colour "  \
                                         "loss, HMOVE blanks)")                                                  \
  X(kTiaBuffer, "machine", "tia.current_buffer", "0 or 1")                                                        \
  X(kTiaLineClock, "machine", "tia.clocks_to_end_of_line", "in [0, 228]")                                         \
  X(kTiaFrameClocks, "machine", "tia.frame_start/start_display/stop_display/last_update_clock",                   \
    "the display window's lines after the frame's start, the last update inside the frame and on its line grid")  \
  X(kTiaFramePixel, "machine", "tia.frame_pixel", "inside the frame and on the current line's pixel")             \
  X(kTiaPosition, "machine", "tia.pos_p0/p1/m0/m1/bl and mask_*.pos", "in [0, 160)")                              \
  X(kTiaMaskSize, "machine", "tia.mask_*.size", "at most 3")                                                      \
  X(kTiaMotion, "machine", "tia.hmp0/hmp1/hmm0/hmm1/hmbl", "at most 15")                                          \
  X(kRiotTimer, "machine", "riot.timer and riot.interval_shift", "timer at most 255, shift 0, 3, 6 or 10")        \
  X(kCartBank, "machine", "cart.bank / cart.slice", "a bank of this mapper's ROM")                                \
  X(kCartFetchers, "machine", "cart.counter / cart.music_fraction_bits (DPC)",                                    \
    "counters of 11 bits, the music fraction in (-1, 1)")                                                         \
  X(kAleMode, "ale_state", "ale.mode / ale.difficulty", "the environment's mode and difficulty")                  \
  X(kAlePaddles, "ale_state", "ale.paddle / events.paddle_resistance / paddle_step_a",                            \
    "paddles in [-2^30, 2^30], resistances not negative, the paddle step in [0, 2^22]")                           \
  X(kStickyRng, "sticky_rng", "index", "at most 624")                                                             \
  X(kNoopRng, "vector_state", "noop_rng", "index at most 624, and not the all-zero state")                        \
  X(kStackIndex, "stack_index", "stack_index", "in [0, stack_num)")

enum StateFault : int32_t {
  kStateOk = 0,
#define CULE_FAULT_ENUM(name, part, field, rule) name,
  CULE_STATE_FAULTS(CULE_FAULT_ENUM)
#undef CULE_FAULT_ENUM
};

#if !CULE_DEVICE_CODE
constexpr const char* kStateFaultNames[] = {
#define CULE_FAULT_NAME(name, part, field, rule) part " " field " must be " rule,
    CULE_STATE_FAULTS(CULE_FAULT_NAME)
#undef CULE_FAULT_NAME
};
#endif

namespace state_check {

// A field of a packed struct in the row, read byte by byte (a row is only
// byte-aligned).
template <class T>
CULE_HD T read(const uint8_t* at) {
  T value;
  uint8_t* to = (uint8_t*)&value;
  for (size_t i = 0; i < sizeof(T); ++i) to[i] = at[i];
  return value;
}

#define CULE_FIELD_AT(base, Struct, field) (base + offsetof(Struct, field))
#define CULE_TIA(field) read<decltype(Tia::field)>(CULE_FIELD_AT(tia, Tia, field))

CULE_HD bool valid_mt(const uint8_t* mt) {
  return read<uint32_t>(mt + 4 * Mt19937::kN) <= (uint32_t)Mt19937::kN;
}

// The state std::mt19937 can never be in: every output would be 0, and the
// no-op draw's rejection loop (vector.hpp uniform_below) would never end.
CULE_HD bool degenerate_mt(const uint8_t* mt) {
  uint32_t bits = read<uint32_t>(mt) & 0x80000000u;
  for (int w = 1; w < Mt19937::kN; ++w) bits |= read<uint32_t>(mt + 4 * w);
  return bits == 0;
}

template <class Cart>
CULE_HD int32_t check_machine(const BatchView& b, const uint8_t* machine) {
  const uint8_t* tia = machine + offsetof(Machine, tia);
  const TiaConfig config = CULE_TIA(config);
  const TiaConfig& rom = b.rom.tia;
  if (config.ystart != rom.ystart || config.height != rom.height || config.max_scanlines != rom.max_scanlines ||
      config.color_loss != rom.color_loss || config.hmove_blanks != rom.hmove_blanks)
    return kTiaConfig;
  if (CULE_TIA(current_buffer) > 1) return kTiaBuffer;
  const int32_t to_line_end = CULE_TIA(clocks_to_end_of_line);
  if (to_line_end < 0 || to_line_end > kClocksPerLine) return kTiaLineClock;
  // Clock differences wrap at 32 bits (tia.hpp): compare them unsigned.
  const uint32_t frame_start = (uint32_t)CULE_TIA(frame_start_clock);
  const uint32_t start = (uint32_t)CULE_TIA(start_display_clock) - frame_start;
  const uint32_t stop = (uint32_t)CULE_TIA(stop_display_clock) - frame_start;
  const uint32_t last = (uint32_t)CULE_TIA(last_update_clock) - frame_start;
  if (start != (uint32_t)kClocksPerLine * config.ystart || stop - start != (uint32_t)kClocksPerLine * config.height ||
      last > stop || (last + (uint32_t)to_line_end) % kClocksPerLine != 0)
    return kTiaFrameClocks;
  // Drawing writes the current line from pixel frame_pixel - x, x being the
  // line's next pixel (render_to): whole lines since the frame's start.
  const uint32_t pixel = CULE_TIA(frame_pixel);
  const uint32_t x = to_line_end >= kScreenWidth ? 0u : (uint32_t)(kScreenWidth - to_line_end);
  if (pixel > (uint32_t)kScreenWidth * (config.ystart + config.height) || pixel % kScreenWidth != x % kScreenWidth)
    return kTiaFramePixel;
  const int16_t positions[] = {CULE_TIA(pos_p0), CULE_TIA(pos_p1), CULE_TIA(pos_m0), CULE_TIA(pos_m1), CULE_TIA(pos_bl),
                               CULE_TIA(mask_p0).pos, CULE_TIA(mask_p1).pos, CULE_TIA(mask_m0).pos,
                               CULE_TIA(mask_m1).pos, CULE_TIA(mask_bl).pos};
  for (int16_t p : positions)
    if (p < 0 || p >= kScreenWidth) return kTiaPosition;
  const uint8_t sizes[] = {CULE_TIA(mask_p0).size, CULE_TIA(mask_p1).size, CULE_TIA(mask_m0).size,
                           CULE_TIA(mask_m1).size, CULE_TIA(mask_bl).size};
  for (uint8_t s : sizes)
    if (s > 3) return kTiaMaskSize;
  const uint8_t motions[] = {CULE_TIA(hmp0), CULE_TIA(hmp1), CULE_TIA(hmm0), CULE_TIA(hmm1), CULE_TIA(hmbl)};
  for (uint8_t m : motions)
    if (m > 15) return kTiaMotion;
  const uint8_t* riot = machine + offsetof(Machine, riot);
  const uint8_t shift = read<uint8_t>(CULE_FIELD_AT(riot, Riot, interval_shift));
  if (read<uint32_t>(CULE_FIELD_AT(riot, Riot, timer)) > 255 || (shift != 0 && shift != 3 && shift != 6 && shift != 10))
    return kRiotTimer;
  switch (Cart::check_state(read<CartState>(machine + offsetof(Machine, cart)))) {
    case kCartOk: return kStateOk;
    case kCartBadBank: return kCartBank;
    default: return kCartFetchers;
  }
}

}  // namespace state_check

// The first fault of a row's payload (`row`: the bytes after the header), or
// kStateOk. Its parts sit as state_parts lists them.
template <class Cart>
CULE_HD int32_t check_row(const BatchView& b, const uint8_t* row, bool with_rng) {
  using namespace state_check;
  if (const int32_t fault = check_machine<Cart>(b, row)) return fault;
  const uint8_t* env = row + sizeof(Machine);
  const uint8_t* ale = env + offsetof(EnvState, ale);
  if (read<uint16_t>(CULE_FIELD_AT(ale, AleState, mode)) != (uint16_t)b.opt.mode ||
      read<uint8_t>(CULE_FIELD_AT(ale, AleState, difficulty)) != (uint8_t)b.opt.difficulty)
    return kAleMode;
  for (int k = 0; k < 2; ++k) {
    const int32_t paddle = read<int32_t>(CULE_FIELD_AT(ale, AleState, paddle) + 4 * k);
    if (paddle < -(1 << 30) || paddle > (1 << 30)) return kAlePaddles;
  }
  for (int k = 0; k < 4; ++k)
    if (read<int32_t>(env + offsetof(EnvState, events) + offsetof(Events, paddle_resistance) + 4 * k) < 0)
      return kAlePaddles;
  const int32_t step = read<int32_t>(env + offsetof(EnvState, paddle_step_a));
  if (step < 0 || step > kMaxPaddleStep) return kAlePaddles;
  const uint8_t* next = env + sizeof(EnvState);
  if (with_rng) {
    if (!valid_mt(next)) return kStickyRng;
    next += sizeof(Mt19937);
  }
  const uint8_t* noop = next + offsetof(VectorState, noop_rng);
  if (!valid_mt(noop) || degenerate_mt(noop)) return kNoopRng;
  const int32_t slot = read<int32_t>(row + part_offset(b, with_rng, kPartStackIndex));
  if (slot < 0 || slot >= b.opt.stack_num) return kStackIndex;
  return kStateOk;
}

#if !CULE_DEVICE_CODE
// The fields check_row reads, by name: where each sits in its part of a row
// (tests mutate them; docs/states.md lists them).
struct CheckedField {
  const char* name;
  StatePartId part;
  size_t offset;
  size_t bytes;
};
#define CULE_MACHINE_FIELD(name, chip, Chip, member) \
  CheckedField{name, kPartMachine, offsetof(Machine, chip) + offsetof(Chip, member), sizeof(Chip::member)}
#define CULE_TIA_MASK(name, mask, member)                                                                    \
  CheckedField{name, kPartMachine, offsetof(Machine, tia) + offsetof(Tia, mask) + offsetof(ObjectMask, member), \
               sizeof(ObjectMask::member)}
#define CULE_ENV_FIELD(name, sub, Sub, member) \
  CheckedField{name, kPartAle, offsetof(EnvState, sub) + offsetof(Sub, member), sizeof(Sub::member)}
inline const CheckedField kCheckedFields[] = {
    CULE_MACHINE_FIELD("tia.config", tia, Tia, config),
    CULE_MACHINE_FIELD("tia.current_buffer", tia, Tia, current_buffer),
    CULE_MACHINE_FIELD("tia.clocks_to_end_of_line", tia, Tia, clocks_to_end_of_line),
    CULE_MACHINE_FIELD("tia.frame_start_clock", tia, Tia, frame_start_clock),
    CULE_MACHINE_FIELD("tia.start_display_clock", tia, Tia, start_display_clock),
    CULE_MACHINE_FIELD("tia.stop_display_clock", tia, Tia, stop_display_clock),
    CULE_MACHINE_FIELD("tia.last_update_clock", tia, Tia, last_update_clock),
    CULE_MACHINE_FIELD("tia.frame_pixel", tia, Tia, frame_pixel),
    CULE_MACHINE_FIELD("tia.pos_p0", tia, Tia, pos_p0),
    CULE_MACHINE_FIELD("tia.pos_p1", tia, Tia, pos_p1),
    CULE_MACHINE_FIELD("tia.pos_m0", tia, Tia, pos_m0),
    CULE_MACHINE_FIELD("tia.pos_m1", tia, Tia, pos_m1),
    CULE_MACHINE_FIELD("tia.pos_bl", tia, Tia, pos_bl),
    CULE_TIA_MASK("tia.mask_p0.pos", mask_p0, pos),
    CULE_TIA_MASK("tia.mask_m1.pos", mask_m1, pos),
    CULE_TIA_MASK("tia.mask_bl.pos", mask_bl, pos),
    CULE_TIA_MASK("tia.mask_m0.size", mask_m0, size),
    CULE_TIA_MASK("tia.mask_bl.size", mask_bl, size),
    CULE_MACHINE_FIELD("tia.hmp0", tia, Tia, hmp0),
    CULE_MACHINE_FIELD("tia.hmbl", tia, Tia, hmbl),
    CULE_MACHINE_FIELD("riot.timer", riot, Riot, timer),
    CULE_MACHINE_FIELD("riot.interval_shift", riot, Riot, interval_shift),
    CULE_MACHINE_FIELD("cart.bank", cart, CartState, bank),
    CULE_MACHINE_FIELD("cart.slice", cart, CartState, slice),
    CULE_MACHINE_FIELD("cart.counter", cart, CartState, counter),
    CULE_MACHINE_FIELD("cart.music_fraction_bits", cart, CartState, music_fraction_bits),
    CULE_ENV_FIELD("ale.mode", ale, AleState, mode),
    CULE_ENV_FIELD("ale.difficulty", ale, AleState, difficulty),
    CULE_ENV_FIELD("ale.paddle", ale, AleState, paddle),
    CULE_ENV_FIELD("events.paddle_resistance", events, Events, paddle_resistance),
    CheckedField{"paddle_step_a", kPartAle, offsetof(EnvState, paddle_step_a), sizeof(EnvState::paddle_step_a)},
    CheckedField{"sticky_rng.index", kPartStickyRng, 4 * Mt19937::kN, 4},
    CheckedField{"noop_rng.index", kPartVector, offsetof(VectorState, noop_rng) + 4 * Mt19937::kN, 4},
    CheckedField{"noop_rng.words", kPartVector, offsetof(VectorState, noop_rng), 4 * Mt19937::kN},
    CheckedField{"stack_index", kPartStackIndex, 0, 4},
};
#undef CULE_MACHINE_FIELD
#undef CULE_TIA_MASK
#undef CULE_ENV_FIELD
#endif

#undef CULE_TIA
#undef CULE_FIELD_AT

}  // namespace cule
