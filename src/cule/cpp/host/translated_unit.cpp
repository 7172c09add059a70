// One game's CPU core built as a library of its own on the user's machine
// (python -m cule.translate, docs/translation.md), which the extension steps
// the game through in place of its mapper's MapperOps:
//  - with CULE_TRANSLATED, the frame loop with the game's translated labels
//    (translated_labels.inc and translated_table.inc, generated);
//  - with CULE_TRANSLATION_TRACE, the plain loop marking the image offset of
//    every instruction it runs, which chooses the labels.
// The build names the mapper (CULE_UNIT_CART) and the game (CULE_UNIT_GAME).
#include <atomic>
#include <cstdint>

#ifdef CULE_TRANSLATION_TRACE
namespace cule::translation {
// Image offsets run (F6's 16K image is the largest the translation takes).
inline std::atomic<uint8_t> executed[0x4000];
}  // namespace cule::translation
// After each instruction: the pc is the next one's, in the banks it runs in.
#define CULE_TRACE_INSTRUCTION() \
  if (c.pc & 0x1000) ::cule::translation::executed[translated_key<Cart>(bus, c.pc)].store(1, std::memory_order_relaxed)
#endif

#include "ale/games/registry.hpp"
#include "mapper_unit.hpp"

#if !defined(CULE_UNIT_CART) || !defined(CULE_UNIT_GAME)
#error "build with -DCULE_UNIT_CART=cule::Cart<name> -DCULE_UNIT_GAME=<the game's unit>"
#endif

// The library is built with hidden symbols (its own copies of the core's
// inline functions stay its own); these three are what the extension calls.
#define CULE_EXPORT __attribute__((visibility("default")))

extern "C" {

CULE_EXPORT const cule::MapperOps* cule_translated_ops() {
  return &cule::ops_of<CULE_UNIT_CART, cule::OneGame<cule::games::CULE_UNIT_GAME>>();
}

// What the extension compares with its own before it takes these ops: the
// sizes of what they share, and the image the mapper indexes.
CULE_EXPORT void cule_translated_layout(uint64_t* out) {
  out[0] = sizeof(cule::Machine);
  out[1] = sizeof(cule::BatchView);
  out[2] = sizeof(cule::MapperOps);
  out[3] = CULE_UNIT_CART::kRomBytes;
}

#ifdef CULE_TRANSLATION_TRACE
// Copies the marks of the first `bytes` image offsets into `out` and clears them.
CULE_EXPORT void cule_trace_take(uint8_t* out, uint32_t bytes) {
  for (uint32_t i = 0; i < bytes && i < sizeof(cule::translation::executed); ++i)
    out[i] = cule::translation::executed[i].exchange(0, std::memory_order_relaxed);
}
#endif
}
