// The pieces of the pybind11 module cule._core, one translation unit each
// (module.cpp puts them together), so the bindings compile in parallel and
// none of them instantiates the emulator core (host/mapper_unit.cpp does).
#pragma once

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

#include "cart/carts.hpp"

namespace cule::bindings {

namespace py = pybind11;

// Mappers by ALE's bank-switching names (mappers.inc).
inline CartType cart_type_of(const std::string& name) {
#define CULE_MAPPER(id, Type) \
  if (name == #id) return CartType::k##id;
#include "cart/mappers.inc"
#undef CULE_MAPPER
  throw std::invalid_argument("unsupported cartridge type '" + name + "'");
}
inline std::string cart_name(CartType type) {
  switch (type) {
#define CULE_MAPPER(id, Type) \
  case CartType::k##id: return #id;
#include "cart/mappers.inc"
#undef CULE_MAPPER
  }
  return "?";
}

void bind_core(py::module_& m);      // the 6507 on a flat bus, the resize, lane layout, lists
void bind_emulator(py::module_& m);  // the CPU backend's batch (host/emulator.hpp)
void bind_shim(py::module_& m);      // the CUDA kernels compiled for the host (kernels/shim.hpp)
void bind_xla(py::module_& m);       // XLA FFI handlers over the CPU backend (cule.jax)
void bind_xla_plan(py::module_& m);  // XLA FFI handlers running the CUDA backend's launches (cule.jax)

// A kernel of kernels.cu compiled for the host, for the mapper `cart` (kernels/shim.hpp's Launch).
using ShimLaunch = void (*)(unsigned grid, unsigned block, const uint64_t* args, const uint8_t* kinds, size_t count);
ShimLaunch shim_kernel(const std::string& cart, const std::string& name);

}  // namespace cule::bindings
