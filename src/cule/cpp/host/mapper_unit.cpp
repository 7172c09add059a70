// One mapper's compiled core: the CPU backend's operations (MapperOps) and
// the launch shim's copy of the CUDA kernels, for the mapper CULE_UNIT_CART
// that the build sets (CMakeLists.txt: one object per entry of mappers.inc).
#include "ale/games/registry.hpp"
#include "mapper_unit.hpp"
#include "vector/state_rows.hpp"
#include "../kernels/shim.hpp"

#ifndef CULE_UNIT_CART
#error "build this file once per mapper with -DCULE_UNIT_CART=cule::Cart<name>"
#endif

namespace cule::shim::unit {
#define CULE_KERNEL static inline void
#define CULE_CART CULE_UNIT_CART
#include "../kernels/kernels.cu"
#undef CULE_CART
#undef CULE_KERNEL
}  // namespace cule::shim::unit

namespace cule {

template const MapperOps& ops_of<CULE_UNIT_CART, Games>();

namespace shim {
template <>
const Kernels& kernels_of<CULE_UNIT_CART>() {
  static const Kernels table = CULE_SHIM_UNIT_KERNELS;
  return table;
}
}  // namespace shim

}  // namespace cule
