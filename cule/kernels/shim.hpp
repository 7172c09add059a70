// The host launch shim: compiles the CUDA kernels (kernels.cu) for the CPU,
// one copy per mapper, with grid and block as loops, so the tests run the
// kernels' own code on a machine without a GPU.
#pragma once

#include <cstdint>

#include "carts.hpp"
#include "games/registry.hpp"
#include "vector.hpp"

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

#define CULE_KERNEL static inline void
// One namespace per mapper, each with its own cule_run and cule_gather.
#define CULE_CART CartType_
namespace k2K { using CartType_ = cule::Cart2K;
#include "kernels.cu"
}
namespace k4K { using CartType_ = cule::Cart4K;
#include "kernels.cu"
}
namespace kF8 { using CartType_ = cule::CartF8;
#include "kernels.cu"
}
namespace kF6 { using CartType_ = cule::CartF6;
#include "kernels.cu"
}
namespace kF8SC { using CartType_ = cule::CartF8SC;
#include "kernels.cu"
}
namespace kF6SC { using CartType_ = cule::CartF6SC;
#include "kernels.cu"
}
namespace kE0 { using CartType_ = cule::CartE0;
#include "kernels.cu"
}
namespace kFE { using CartType_ = cule::CartFE;
#include "kernels.cu"
}
namespace kDPC { using CartType_ = cule::CartDPC;
#include "kernels.cu"
}
#undef CULE_CART
#undef CULE_KERNEL

// Calls f(&ns::cule_run, &ns::cule_gather) for the mapper's copy.
template <class F>
void with_kernels(CartType type, F&& f) {
  switch (type) {
    case CartType::k2K: return f(&k2K::cule_run, &k2K::cule_gather);
    case CartType::k4K: return f(&k4K::cule_run, &k4K::cule_gather);
    case CartType::kF8: return f(&kF8::cule_run, &kF8::cule_gather);
    case CartType::kF6: return f(&kF6::cule_run, &kF6::cule_gather);
    case CartType::kF8SC: return f(&kF8SC::cule_run, &kF8SC::cule_gather);
    case CartType::kF6SC: return f(&kF6SC::cule_run, &kF6SC::cule_gather);
    case CartType::kE0: return f(&kE0::cule_run, &kE0::cule_gather);
    case CartType::kFE: return f(&kFE::cule_run, &kFE::cule_gather);
    case CartType::kDPC: return f(&kDPC::cule_run, &kDPC::cule_gather);
  }
}

}  // namespace cule::shim
