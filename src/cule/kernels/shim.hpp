// The host launch shim: the CUDA kernels (kernels.cu) compiled for the CPU,
// grid and block as loops, so the tests run the kernels' own code on a
// machine without a GPU. Each mapper's unit (cpp/host/mapper_unit.cpp)
// includes kernels.cu once and lists its kernels here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "cart/carts.hpp"

namespace cule::shim {

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

// The kernels, in the order Kernels holds them; the Python side takes the
// names from here (cule._core.kernel_names) for both launchers.
#define CULE_KERNEL_LIST(X) \
  X(cule_run) X(cule_render) X(cule_reset) X(cule_gather) X(cule_state_rows) X(cule_copy_state)

// A launch as the CUDA driver API takes one: the kernel's arguments as one
// list, here 64-bit words (pointers as addresses), as Python passes them.
using Launch = void (*)(unsigned grid, unsigned block, const uint64_t* args, size_t count);

struct Kernels {
#define CULE_KERNEL_FIELD(name) Launch name;
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
  static void launch_words(unsigned grid, unsigned block, const uint64_t* args, size_t count) {
    if (count != sizeof...(Args))
      throw std::invalid_argument("the kernel takes " + std::to_string(sizeof...(Args)) + " arguments, got " +
                                  std::to_string(count));
    unpack(grid, block, args, std::index_sequence_for<Args...>{});
  }
  template <size_t... I>
  static void unpack(unsigned grid, unsigned block, const uint64_t* args, std::index_sequence<I...>) {
    launch(grid, block, Kernel, from_word<Args>(args[I])...);
  }
};

// Defined by each mapper's unit (as an explicit specialization, so no
// other translation unit may instantiate it: bind_shim.cpp dispatches).
template <class Cart>
const Kernels& kernels_of();

}  // namespace cule::shim
