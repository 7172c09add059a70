// cule._core.shim_launch: the CUDA kernels compiled for the host (the launch
// shim), launched the way the CUDA backend launches them on a device.
#include <pybind11/stl.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "../kernels/shim.hpp"

namespace cule::bindings {
namespace {

const shim::Kernels& kernels(CartType type) {
  switch (type) {
#define CULE_MAPPER(id, Type) \
  case CartType::k##id: return shim::kernels_of<Type>();
#include "cart/mappers.inc"
#undef CULE_MAPPER
  }
  throw std::invalid_argument("unknown cartridge type");
}

shim::Launch kernel(const shim::Kernels& k, const std::string& name) {
#define CULE_KERNEL_PICK(id) \
  if (name == #id) return k.id;
  CULE_KERNEL_LIST(CULE_KERNEL_PICK)
#undef CULE_KERNEL_PICK
  throw std::invalid_argument("no kernel named '" + name + "'");
}

}  // namespace

void bind_shim(py::module_& m) {
  py::list names;
#define CULE_KERNEL_NAME(name) names.append(#name);
  CULE_KERNEL_LIST(CULE_KERNEL_NAME)
#undef CULE_KERNEL_NAME
  m.attr("kernel_names") = names;
  m.def("shim_launch", [](const std::string& cart, const std::string& name, unsigned grid, unsigned block,
                          const std::vector<uint64_t>& args) {
    const shim::Launch launch = kernel(kernels(cart_type_of(cart)), name);
    py::gil_scoped_release release;
    launch(grid, block, args.data(), args.size());
  }, py::arg("cart"), py::arg("kernel"), py::arg("grid"), py::arg("block"), py::arg("args"),
     "kernel<<<grid, block>>>(args...) of kernels.cu compiled for the host, for the mapper `cart`; the "
     "arguments as 64-bit words, pointers as addresses (what the CUDA backend passes NVRTC's kernels).");
}

}  // namespace cule::bindings
