// cule._core.shim_launch: the CUDA kernels compiled for the host (the launch
// shim), launched the way the CUDA backend launches them on a device.
#include <pybind11/stl.h>

#include <cstdint>
#include <stdexcept>
#include <initializer_list>
#include <string>
#include <tuple>
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
  if (const shim::Launch launch = shim::kernel_named(k, name)) return launch;
  throw std::invalid_argument("no kernel named '" + name + "'");
}

// One kernel's parameters as Python reads them: (name, C++ type, kind).
py::list signature(std::initializer_list<std::tuple<const char*, const char*, shim::ArgKind>> params) {
  py::list out;
  for (const auto& [name, type, kind] : params) out.append(py::make_tuple(name, type, shim::arg_kind_name(kind)));
  return out;
}

}  // namespace

shim::Launch shim_kernel(const std::string& cart, const std::string& name) {
  return kernel(kernels(cart_type_of(cart)), name);
}

void bind_shim(py::module_& m) {
  py::dict signatures;
#define CULE_P(type, name) std::make_tuple(#name, #type, shim::arg_kind<type>())
#define CULE_S ,
#define CULE_KERNEL_SIGNATURE(kernel, tag) signatures[#kernel] = signature({CULE_##tag##_PARAMS});
  CULE_KERNEL_LIST(CULE_KERNEL_SIGNATURE)
#undef CULE_KERNEL_SIGNATURE
#undef CULE_P
#undef CULE_S
  m.attr("kernel_signatures") = signatures;
  m.attr("threads_per_block") = CULE_THREADS_PER_BLOCK;
  m.attr("shim_sms") = shim::kShimSms;
  m.def("shim_launch", [](const std::string& cart, const std::string& name, unsigned grid, unsigned block,
                          const std::vector<uint64_t>& args, const std::vector<uint8_t>& kinds) {
    if (kinds.size() != args.size()) throw std::invalid_argument("one kind per argument");
    const shim::Launch launch = shim_kernel(cart, name);
    py::gil_scoped_release release;
    launch(grid, block, args.data(), kinds.data(), args.size());
  }, py::arg("cart"), py::arg("kernel"), py::arg("grid"), py::arg("block"), py::arg("args"), py::arg("kinds"),
     "kernel<<<grid, block>>>(args...) of kernels.cu compiled for the host, for the mapper `cart`; the "
     "arguments as 64-bit words, pointers as addresses (what the CUDA backend passes NVRTC's kernels), each "
     "with its kind (1 pointer, 2 int32), checked against the kernel's parameter types.");
}

}  // namespace cule::bindings
