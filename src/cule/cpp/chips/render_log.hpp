// A frame's TIA accesses, recorded by the state update so that a separate
// render pass (the CUDA backend's cule_render kernel) draws the frame later:
// the state update then runs the TIA without pixels (collisions, positions and
// masks still happen) and the render pass replays the frame from the TIA's
// state at its start.
//
// Writes are replayed as they happened. A read only owes the picture a
// catch-up to its clock (tia::peek), and drawing to clock a then to a later
// clock b, with nothing changed in between, draws what drawing to b at once
// draws (pieces end at line ends either way), so of the reads between two
// writes only the last is kept: a frame records at most one read per write.
#pragma once

#include "common.hpp"
#include "tia.hpp"

namespace cule {

enum : uint8_t { kAccessRead = 0, kAccessWrite = 1, kAccessAfterRead = 2 };

struct TiaAccess {
  uint32_t cycles;  // system clock: CPU cycles since the frame started
  uint8_t address;  // TIA address (writes)
  uint8_t value;    // byte written
  uint8_t kind;     // kAccessRead, or kAccessWrite | kAccessAfterRead when the CPU's previous access read
  uint8_t pad_;
};

// One run_frame call recorded: a whole frame, or the part of one a call ran.
struct FrameRecord {
  Tia start;            // the TIA when the call began (after start_frame)
  uint32_t first;       // its accesses: [first, first + count)
  uint32_t count;
  uint32_t end_cycles;  // the clock when the call stopped
  uint8_t greyed;       // the call ended by greying an unfinished frame
  uint8_t captures;     // bit k: the vector step captured this frame as its frame k
  uint8_t pad_[2];
};

// Per environment: what the state update left for the render pass, and
// counts for CudaBackend.render_stats() (read through _core.render_log_dtype).
#define CULE_RENDER_LOG_STEP_FIELDS(X)                                              \
  X(uint32_t, frames)   /* records used */                                          \
  X(uint32_t, accesses) /* accesses used */                                         \
  X(uint8_t, overflow)  /* out of room: the step is run again drawing as it goes */ \
  X(uint8_t, pending)   /* frames to replay and a screen to process */
#define CULE_RENDER_LOG_STAT_FIELDS(X)                                                           \
  X(uint32_t, replayed_steps) /* steps drawn by the render pass */                               \
  X(uint32_t, inline_steps)   /* steps drawn by the state update (gymnasium steps, overflows) */ \
  X(uint32_t, peak_accesses)  /* the most accesses a recorded step used */
#define CULE_RENDER_LOG_FIELDS(X) CULE_RENDER_LOG_STEP_FIELDS(X) CULE_RENDER_LOG_STAT_FIELDS(X)

struct RenderLog {
  CULE_RENDER_LOG_STEP_FIELDS(CULE_DECLARE_FIELD)
  uint8_t pad_[2];
  CULE_RENDER_LOG_STAT_FIELDS(CULE_DECLARE_FIELD)
};
static_assert(sizeof(RenderLog) == 24, "device arrays depend on the render log's layout");

// One environment's accesses in the lane-laid access log (common.hpp):
// access i at base[i * lanes]. The render pass replays a warp's logs in step,
// so its reads coalesce.
struct AccessSlice {
  TiaAccess* base;
  uint32_t lanes;
  CULE_HD TiaAccess& operator[](uint32_t i) const { return base[(size_t)i * lanes]; }
};

// The recording side, over one environment's slices of the log arrays; the
// console's bus calls read() and write() for its TIA accesses.
struct FrameRecorder {
  RenderLog* log;
  FrameRecord* frames;
  AccessSlice accesses;
  uint32_t frame_capacity, access_capacity;

  CULE_HD void clear() {
    log->frames = log->accesses = 0;
    log->overflow = 0;
  }
  CULE_HD FrameRecord* current() const { return log->frames ? &frames[log->frames - 1] : nullptr; }

  CULE_HD void begin(const Tia& t) {
    if (log->overflow) return;
    if (log->frames >= frame_capacity) {
      log->overflow = 1;
      return;
    }
    FrameRecord& r = frames[log->frames++];
    r.start = t;
    r.first = log->accesses;
    r.count = 0;
    r.end_cycles = 0;
    r.greyed = 0;
    r.captures = 0;
  }
  CULE_HD void append(const TiaAccess& a) {
    if (log->overflow) return;
    if (log->accesses >= access_capacity) {
      log->overflow = 1;
      return;
    }
    accesses[log->accesses++] = a;
  }
  CULE_HOT void read(uint32_t cycles) {
    if (log->overflow) return;
    const FrameRecord& r = frames[log->frames - 1];
    if (log->accesses > r.first && accesses[log->accesses - 1].kind == kAccessRead)
      accesses[log->accesses - 1].cycles = cycles;  // the later read draws at least as far
    else
      append(TiaAccess{cycles, 0, 0, kAccessRead, 0});
  }
  CULE_HOT void write(uint32_t cycles, uint16_t address, uint8_t value, bool after_read) {
    append(TiaAccess{cycles, (uint8_t)address, value, (uint8_t)(kAccessWrite | (after_read ? kAccessAfterRead : 0)), 0});
  }
  CULE_HD void end(uint32_t cycles, bool greyed) {
    if (log->overflow) return;
    FrameRecord& r = frames[log->frames - 1];
    r.count = log->accesses - r.first;
    r.end_cycles = cycles;
    r.greyed = greyed;
  }
};

namespace tia {

// Draws a recorded frame into its buffer (of the two at `buffers`, the one
// the TIA had current) and returns that buffer.
CULE_PHASE uint8_t* replay(const FrameRecord& r, AccessSlice accesses, uint8_t* buffers, uint32_t frame_bytes) {
  Tia t = r.start;
  uint8_t* frame = buffers + (size_t)t.current_buffer * frame_bytes;
  int32_t due = t.last_update_clock;  // as the console's bus keeps it (tia::poke)
  for (uint32_t i = r.first; i < r.first + r.count; ++i) {
    const TiaAccess a = accesses[i];
    if (a.kind & kAccessWrite)
      due = poke(t, frame, a.address, a.value, a.cycles, (a.kind & kAccessAfterRead) != 0, due).due();
    else
      due = later(due, (int32_t)(a.cycles * 3));  // collisions are the state update's business
  }
  settle(t, frame, due);
  if (r.greyed) grey_out(t, frame, r.end_cycles);
  return frame;
}

}  // namespace tia
}  // namespace cule
