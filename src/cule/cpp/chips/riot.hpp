// The 6532 RIOT as ALE's Stella (M6532.cxx) runs it: 128 bytes of RAM, the
// interval timer and the two ports (M6532::peek, M6532::poke, M6532::reset).
#pragma once

#include "common.hpp"

namespace cule {

// The timer and port registers; the RAM follows them in Riot.
#define CULE_RIOT_FIELDS(X)                                                              \
  X(uint32_t, timer)                /* value last written (or drawn at reset) */         \
  X(int32_t, timer_set_cycle)       /* system cycle of that write, rebased each frame */ \
  X(int32_t, interrupt_read_cycle)  /* cycle of the first INTIM read after expiry */     \
  X(uint8_t, interval_shift)        /* 0, 3, 6 or 10: TIM1T, TIM8T, TIM64T, T1024T */    \
  X(uint8_t, read_after_interrupt)                                                       \
  X(uint8_t, ddra)

struct Riot {
  CULE_RIOT_FIELDS(CULE_DECLARE_FIELD)
  uint8_t pad_;
  uint8_t ram[128];
};
static_assert(sizeof(Riot) == 144, "saved states and device arrays depend on the RIOT's layout");

namespace riot {

// What the two ports read; the console fills it from the controllers.
struct Ports {
  uint8_t swcha;  // joystick directions / paddle buttons, 1 = not pressed
  uint8_t swchb;  // console switches
};

// M6532::reset: RAM is left alone (filled once at power-on); the timer
// starts from one draw of the system RNG.
CULE_HD void reset(Riot& r, uint32_t rng_draw) {
  r.timer = 25 + rng_draw % 75;
  r.interval_shift = 6;
  r.timer_set_cycle = 0;
  r.interrupt_read_cycle = 0;
  r.read_after_interrupt = 0;
  r.ddra = 0;
}

// The system clock restarts at 0 each frame; keep the stored times relative.
CULE_HD void rebase_cycles(Riot& r, uint32_t cycles) {
  r.timer_set_cycle -= (int32_t)cycles;
  r.interrupt_read_cycle -= (int32_t)cycles;
}

// Timer reads see the clock one cycle before the end of the instruction.
CULE_HD uint32_t timer_delta(const Riot& r, uint32_t cycles) { return (cycles - 1) - (uint32_t)r.timer_set_cycle; }

// The count a timer read sees while the timer runs, `delta` cycles after it
// was set; negative once it has expired, when reads have their own rules (peek).
CULE_HD int32_t running_count(const Riot& r, uint32_t delta) {
  return (int32_t)r.timer - (int32_t)(delta >> r.interval_shift) - 1;
}

// Reads of $280-$29F (and mirrors): a & 7 selects the register.
CULE_PHASE uint8_t peek(Riot& r, uint16_t address, uint32_t cycles, const Ports& ports) {
  switch (address & 0x07) {
    case 0: return ports.swcha;  // DDRA and the output latch are ignored on read
    case 1: return r.ddra;
    case 2: return ports.swchb;
    case 3: return 0;  // SWBCNT: Stella never stores it
    default: break;
  }
  const uint32_t delta = timer_delta(r, cycles);
  int32_t value = running_count(r, delta);
  if ((address & 0x01) != 0) {  // TIMINT: reading it changes nothing
    return (value >= 0 || r.read_after_interrupt) ? 0x00 : 0x80;
  }
  if (value >= 0) return (uint8_t)value;
  // Expired: after the first read at least two cycles past expiry, the
  // counter keeps falling once per interval, not once per cycle.
  value = (int32_t)(r.timer << r.interval_shift) - (int32_t)delta - 1;
  if (value <= -2 && !r.read_after_interrupt) {
    r.read_after_interrupt = 1;
    r.interrupt_read_cycle = (int32_t)cycles;
  }
  if (r.read_after_interrupt) {
    const int32_t offset = r.interrupt_read_cycle - (r.timer_set_cycle + (int32_t)(r.timer << r.interval_shift));
    value = (int32_t)r.timer - (int32_t)(delta >> r.interval_shift) - offset;
  }
  return (uint8_t)value;
}

CULE_PHASE void poke(Riot& r, uint16_t address, uint8_t value, uint32_t cycles) {
  const uint8_t port = address & 0x07;
  if (port == 0 || port == 2 || port == 3) return;  // no controller listens; SWCHB/SWBCNT ignored
  if (port == 1) {
    r.ddra = value;
    return;
  }
  if ((address & 0x14) == 0x14) {  // A2 and A4: the timer; A3 (interrupt enable) is ignored
    const uint8_t shifts[4] = {0, 3, 6, 10};
    r.timer = value;
    r.interval_shift = shifts[address & 0x03];
    r.timer_set_cycle = (int32_t)cycles;
    r.read_after_interrupt = 0;
  }
  // Edge-detect control ($284-$287, $28C-$28F) is not implemented in Stella.
}

}  // namespace riot
}  // namespace cule
