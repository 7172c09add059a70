// The host launch shim: the CUDA kernels (kernels.cu) compiled for the CPU,
// grid and block as loops, so the tests run the kernels' own code on a
// machine without a GPU. Each mapper's unit (cpp/host/mapper_unit.cpp)
// includes kernels.cu once and fills a Kernels table with its launchers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "cart/carts.hpp"
#include "vector/kernel_abi.hpp"

namespace cule::shim {

// The SM count the launch geometry assumes on the shim by default: an H100's.
constexpr int kShimSms = 132;

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};
inline thread_local Dim3 blockIdx, threadIdx, blockDim, gridDim;

// kernel<<<grid, block>>>(args...), one block after another.
template <class Kernel, class... Args>
void launch(unsigned grid, unsigned block, Kernel kernel, Args... args) {
  blockDim = Dim3{block, 1, 1};
  gridDim = Dim3{grid, 1, 1};
  for (unsigned b = 0; b < grid; ++b)
    for (unsigned t = 0; t < block; ++t) {
      blockIdx = Dim3{b, 1, 1};
      threadIdx = Dim3{t, 1, 1};
      kernel(args...);
    }
}

// How an argument travels from Python (cule._core.kernel_signatures): a
// device address, or a 32-bit integer. kernel_abi.hpp's lists use no other.
enum class ArgKind : uint8_t { kPointer = 1, kInt32 = 2 };

template <class T>
constexpr ArgKind arg_kind() {
  if constexpr (std::is_pointer<T>::value) {
    return ArgKind::kPointer;
  } else {
    static_assert(std::is_same<T, int32_t>::value, "kernel parameters are pointers or int32_t");
    return ArgKind::kInt32;
  }
}

inline const char* arg_kind_name(ArgKind kind) { return kind == ArgKind::kPointer ? "pointer" : "int32"; }

// A launch as the CUDA driver API takes one: the kernel's arguments as one
// list, here 64-bit words (pointers as addresses) with the kind Python gave
// each, checked against the kernel's parameter types.
using Launch = void (*)(unsigned grid, unsigned block, const uint64_t* args, const uint8_t* kinds, size_t count);

// The kernels, in kernel_abi.hpp's order.
struct Kernels {
#define CULE_KERNEL_FIELD(name, tag) Launch name;
  CULE_KERNEL_LIST(CULE_KERNEL_FIELD)
#undef CULE_KERNEL_FIELD
};

template <class T>
T from_word(uint64_t word) {
  if constexpr (std::is_pointer<T>::value) {
    return reinterpret_cast<T>((uintptr_t)word);
  } else {
    return (T)word;
  }
}

template <auto Kernel>
struct Launcher;
template <class... Args, void (*Kernel)(Args...)>
struct Launcher<Kernel> {
  static void launch_words(unsigned grid, unsigned block, const uint64_t* args, const uint8_t* kinds, size_t count) {
    if (count != sizeof...(Args))
      throw std::invalid_argument("the kernel takes " + std::to_string(sizeof...(Args)) + " arguments, got " +
                                  std::to_string(count));
    constexpr ArgKind expected[] = {arg_kind<Args>()...};
    for (size_t i = 0; i < count; ++i)
      if (kinds[i] != (uint8_t)expected[i])
        throw std::invalid_argument("argument " + std::to_string(i) + " of the kernel is of kind " +
                                    arg_kind_name(expected[i]) + ", got another kind");
    unpack(grid, block, args, std::index_sequence_for<Args...>{});
  }
  template <size_t... I>
  static void unpack(unsigned grid, unsigned block, const uint64_t* args, std::index_sequence<I...>) {
    launch(grid, block, Kernel, from_word<Args>(args[I])...);
  }
};

// The Kernels table of the kernels that kernels.cu defines when included in
// namespace cule::shim::unit (by a mapper's unit, host/mapper_unit.cpp, or
// by the device's code, device_shim.cpp).
#define CULE_SHIM_UNIT_LAUNCH(name, tag) &cule::shim::Launcher<&cule::shim::unit::name>::launch_words,
#define CULE_SHIM_UNIT_KERNELS \
  cule::shim::Kernels { CULE_KERNEL_LIST(CULE_SHIM_UNIT_LAUNCH) }

// Kernel `name` of a table, or null when none is called so.
inline Launch kernel_named(const Kernels& k, const std::string& name) {
#define CULE_KERNEL_PICK(id, tag) \
  if (name == #id) return k.id;
  CULE_KERNEL_LIST(CULE_KERNEL_PICK)
#undef CULE_KERNEL_PICK
  return nullptr;
}

// Defined by each mapper's unit (as an explicit specialization, so no
// other translation unit may instantiate it: bind_shim.cpp dispatches).
template <class Cart>
const Kernels& kernels_of();

}  // namespace cule::shim
