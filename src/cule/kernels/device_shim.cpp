// The CUDA kernels as the GPU runs them, built by a host compiler: with
// -DCULE_DEVICE_CODE=1 every switch between host and device code
// (common.hpp) takes the device's side (the opcode switch, the scanline loop
// that ends at WSYNC, the TIA without the host's tables), and shim.hpp runs
// grid and block as loops. One library per mapper (-DCULE_CART=...), built
// and loaded by cule/kernels/device_shim.py; its one entry point launches a
// kernel by name as cule._core.shim_launch does.
#include <exception>
#include <string>

#include "ale/games/registry.hpp"
#include "cart/carts.hpp"
#include "vector/kernel_abi.hpp"
#include "vector/state_check.hpp"
#include "vector/state_rows.hpp"
#include "vector/vector.hpp"
#include "shim.hpp"

#if !CULE_DEVICE_CODE || !CULE_DEVICE_ON_HOST
#error "build with a host compiler and -DCULE_DEVICE_CODE=1 (cule/kernels/device_shim.py)"
#endif

namespace cule::shim::unit {
#define CULE_KERNEL static inline void
#include "kernels.cu"
#undef CULE_KERNEL
}  // namespace cule::shim::unit

// Launches kernel `name`; returns null, or what went wrong (valid until the next call).
extern "C" __attribute__((visibility("default"))) const char* cule_device_shim_launch(
    const char* name, unsigned grid, unsigned block, const uint64_t* args, const uint8_t* kinds, size_t count) {
  static const cule::shim::Kernels table = CULE_SHIM_UNIT_KERNELS;
  static std::string error;
  try {
    if (const cule::shim::Launch launch = cule::shim::kernel_named(table, name)) {
      launch(grid, block, args, kinds, count);
      return nullptr;
    }
    error = std::string("no kernel named '") + name + "'";
  } catch (const std::exception& e) {
    error = e.what();
  }
  return error.c_str();
}
