// XLA FFI handlers that run the CUDA backend's launches for a jitted JAX
// program (cule.jax.make on a GPU or on the launch shim): the kernels on
// XLA's stream, reading actions and writing observations and step outputs
// in XLA's own buffers, with no host round trip.
//
// Python records a plan once per env (cule.jax): the step's kernel launches
// as the CUDA backend makes them (backends/cuda.py launch_step and
// launch_gather), each argument a fixed word (the batch's device arrays) or
// a slot naming one of the call's buffers. A call names its plan by the
// attribute `plan`. On CUDA the launches go through the driver's
// cuLaunchKernel (libcuda, opened at first use: the extension links no CUDA
// library); on the launch shim through the kernels compiled for the host.
#include <dlfcn.h>
#include <pybind11/stl.h>

#include <cstring>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "xla_ffi.hpp"

namespace cule::bindings {

namespace {

// The few driver entry points a plan needs (cuda.h's signatures; CUresult is
// an int, streams and functions are opaque pointers, device addresses 64-bit).
struct Driver {
  using Launch = int (*)(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned shared, void* stream, void** params, void** extra);
  using Memset = int (*)(uint64_t dst, unsigned char value, size_t bytes, void* stream);
  using Copy = int (*)(uint64_t dst, uint64_t src, size_t bytes, void* stream);
  using ErrorString = int (*)(int result, const char** text);
  Launch launch = nullptr;
  Memset memset = nullptr;
  Copy copy = nullptr;
  ErrorString error_string = nullptr;

  static const Driver& get() {
    static const Driver driver = [] {
      Driver d;
      void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
      if (!lib) throw std::runtime_error("cule: the CUDA driver (libcuda.so.1) could not be opened");
      d.launch = reinterpret_cast<Launch>(dlsym(lib, "cuLaunchKernel"));
      d.memset = reinterpret_cast<Memset>(dlsym(lib, "cuMemsetD8Async"));
      d.copy = reinterpret_cast<Copy>(dlsym(lib, "cuMemcpyDtoDAsync_v2"));
      d.error_string = reinterpret_cast<ErrorString>(dlsym(lib, "cuGetErrorString"));
      if (!d.launch || !d.memset || !d.copy)
        throw std::runtime_error("cule: the CUDA driver lacks cuLaunchKernel, cuMemsetD8Async or cuMemcpyDtoDAsync");
      return d;
    }();
    return driver;
  }

  void check(int result, const char* what) const {
    if (result == 0) return;
    const char* text = nullptr;
    if (error_string) error_string(result, &text);
    throw std::runtime_error(std::string("cule: ") + what + " failed: CUDA error " + std::to_string(result) +
                             (text ? std::string(" (") + text + ")" : std::string()));
  }
};

struct Op {
  bool zero = false;   // a memset of `bytes` at values[0], else a kernel launch
  size_t bytes = 0;
  uintptr_t function = 0;                // CUfunction (CUDA)
  ShimLaunch shim = nullptr;             // the host build (shim)
  unsigned grid = 1, block = 1, shared = 0;
  std::vector<uint64_t> values;          // each argument's word
  std::vector<uint8_t> kinds;            // 1 pointer, 2 int32 (shim::ArgKind)
  std::vector<int> slots;                // -1: values[i]; else the call's buffer (args, then rets)
};

struct Plan {
  bool cuda = false;
  std::vector<Op> ops;
  std::vector<size_t> args;  // each argument buffer's byte count (the state, then the input)
  std::vector<size_t> rets;  // each result buffer's byte count (the state, obs, then the step outputs)
};

xla::Registry<const Plan> plans("launch plan");

int32_t plan_attribute(const xla::Attrs& attrs) {
  for (int64_t i = 0; i < attrs.size; ++i) {
    const xla::ByteSpan* name = attrs.names[i];
    if (attrs.types[i] != xla::kScalarAttr || std::string(name->ptr, name->len) != "plan") continue;
    const auto* scalar = static_cast<const xla::Scalar*>(attrs.attrs[i]);
    if (scalar->dtype != xla::kS32) break;
    return *static_cast<const int32_t*>(scalar->value);
  }
  throw std::invalid_argument("cule: the call has no int32 attribute `plan`");
}

size_t byte_size(const xla::Buffer* b) {
  // XLA_FFI_DataType's element sizes: PRED, S8, S16, S32, S64, U8, U16, U32, U64, F16, F32, F64 are 1 to 12
  static constexpr size_t kBytes[] = {0, 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8};
  size_t count = 1;
  for (int64_t d = 0; d < b->rank; ++d) count *= (size_t)b->dims[d];
  const int dtype = (int)b->dtype;
  return count * (dtype > 0 && dtype < (int)std::size(kBytes) ? kBytes[dtype] : 0);
}

// The call's buffers, args then rets, checked against the plan's sizes.
std::vector<uint64_t> call_buffers(const xla::CallFrame& frame, const Plan& plan) {
  if ((size_t)frame.args.size != plan.args.size() || (size_t)frame.rets.size != plan.rets.size())
    throw std::invalid_argument("cule: the call has " + std::to_string(frame.args.size) + " arguments and " +
                                std::to_string(frame.rets.size) + " results; its plan takes " +
                                std::to_string(plan.args.size()) + " and " + std::to_string(plan.rets.size()));
  std::vector<uint64_t> out;
  auto take = [&](const xla::List& list, const std::vector<size_t>& bytes, const char* what) {
    for (int64_t i = 0; i < list.size; ++i) {
      if (list.types[i] != 1) throw std::invalid_argument(std::string("cule: ") + what + " is not a buffer");
      const auto* b = static_cast<const xla::Buffer*>(list.items[i]);
      if (byte_size(b) != bytes[i])
        throw std::invalid_argument(std::string("cule: ") + what + " " + std::to_string(i) + " has " +
                                    std::to_string(byte_size(b)) + " bytes; its plan expects " +
                                    std::to_string(bytes[i]));
      out.push_back(reinterpret_cast<uintptr_t>(b->data));
    }
  };
  take(frame.args, plan.args, "argument");
  take(frame.rets, plan.rets, "result");
  return out;
}

void run_plan(const Plan& plan, const std::vector<uint64_t>& buffers, void* stream) {
  const size_t state = buffers[plan.args.size()];  // the state result: the state argument, passed on
  if (plan.cuda) {
    const Driver& cu = Driver::get();
    for (const Op& op : plan.ops) {
      if (op.zero) {
        cu.check(cu.memset(op.values[0], 0, op.bytes, stream), "cuMemsetD8Async");
        continue;
      }
      std::vector<uint64_t> words(op.values.size());
      std::vector<int32_t> ints(op.values.size());
      std::vector<void*> params(op.values.size());
      for (size_t i = 0; i < op.values.size(); ++i) {
        words[i] = op.slots[i] < 0 ? op.values[i] : buffers[op.slots[i]];
        ints[i] = (int32_t)words[i];
        params[i] = op.kinds[i] == 2 ? static_cast<void*>(&ints[i]) : static_cast<void*>(&words[i]);
      }
      cu.check(cu.launch(reinterpret_cast<void*>(op.function), op.grid, 1, 1, op.block, 1, 1, op.shared, stream,
                         params.data(), nullptr),
               "cuLaunchKernel");
    }
    cu.check(cu.copy(state, buffers[0], 2 * sizeof(int32_t), stream), "cuMemcpyDtoDAsync");
    return;
  }
  for (const Op& op : plan.ops) {
    if (op.zero) {
      std::memset(reinterpret_cast<void*>(op.values[0]), 0, op.bytes);
      continue;
    }
    std::vector<uint64_t> words(op.values);
    for (size_t i = 0; i < words.size(); ++i)
      if (op.slots[i] >= 0) words[i] = buffers[op.slots[i]];
    op.shim(op.grid, op.block, words.data(), op.kinds.data(), words.size());
  }
  std::memcpy(reinterpret_cast<void*>(state), reinterpret_cast<const void*>(buffers[0]), 2 * sizeof(int32_t));
}

template <bool kCuda>
xla::Error* plan_call(xla::CallFrame* frame) {
  if (xla::answer_metadata(frame) || frame->stage != xla::kExecute) return nullptr;
  try {
    const std::shared_ptr<const Plan> plan = plans.get(plan_attribute(frame->attrs));
    if (plan->cuda != kCuda)
      throw std::invalid_argument(std::string("cule: a ") + (plan->cuda ? "CUDA" : "launch shim") +
                                  " plan was called on XLA's " + (kCuda ? "CUDA" : "cpu") + " platform");
    const std::vector<uint64_t> buffers = call_buffers(*frame, *plan);
    void* stream = nullptr;
    if (kCuda) {
      xla::StreamGetArgs args{sizeof(xla::StreamGetArgs), nullptr, frame->ctx, nullptr};
      if (xla::Error* e = frame->api->stream_get(&args)) return e;
      stream = args.stream;
    }
    run_plan(*plan, buffers, stream);
    return nullptr;
  } catch (const std::invalid_argument& e) {
    return xla::make_error(frame, xla::kInvalidArgument, e.what());
  } catch (const std::exception& e) {
    return xla::make_error(frame, xla::kInternal, e.what());
  }
}

xla::Error* cuda_call(xla::CallFrame* frame) { return plan_call<true>(frame); }
xla::Error* shim_call(xla::CallFrame* frame) { return plan_call<false>(frame); }

}  // namespace

void bind_xla_plan(py::module_& m) {
  m.def(
      "xla_register_plan",
      [](bool cuda, const std::string& cart, const py::list& ops, const std::vector<size_t>& args,
         const std::vector<size_t>& rets) {
        auto plan = std::make_shared<Plan>();
        plan->cuda = cuda;
        plan->args = args;
        plan->rets = rets;
        const size_t buffers = args.size() + rets.size();
        if (args.empty() || rets.empty() || args[0] != 2 * sizeof(int32_t) || rets[0] != 2 * sizeof(int32_t))
          throw std::invalid_argument("a plan's first argument and first result are the int32[2] state");
        for (const py::handle& item : ops) {
          const py::tuple t = item.cast<py::tuple>();
          Op op;
          if (t[0].cast<std::string>() == "zero") {
            op.zero = true;
            op.values = {t[1].cast<uint64_t>()};
            op.bytes = t[2].cast<size_t>();
          } else {  // (kernel, function, grid, block, shared, values, kinds, slots)
            op.shim = cuda ? nullptr : shim_kernel(cart, t[0].cast<std::string>());
            op.function = t[1].cast<uintptr_t>();
            op.grid = t[2].cast<unsigned>();
            op.block = t[3].cast<unsigned>();
            op.shared = t[4].cast<unsigned>();
            op.values = t[5].cast<std::vector<uint64_t>>();
            op.kinds = t[6].cast<std::vector<uint8_t>>();
            op.slots = t[7].cast<std::vector<int>>();
            if (op.kinds.size() != op.values.size() || op.slots.size() != op.values.size())
              throw std::invalid_argument("one kind and one slot per argument");
            for (int slot : op.slots)
              if (slot >= (int)buffers) throw std::invalid_argument("a slot past the call's buffers");
            if (cuda && !op.function) throw std::invalid_argument("a CUDA launch needs its CUfunction");
          }
          plan->ops.push_back(std::move(op));
        }
        if (cuda) Driver::get();  // fails here, not inside XLA, where the driver is missing
        return plans.add(plan);
      },
      py::arg("cuda"), py::arg("cart"), py::arg("ops"), py::arg("args"), py::arg("rets"),
      "Registers a launch plan (cule.jax) and returns its handle. ops: ('zero', address, bytes) or (kernel, "
      "CUfunction or 0, grid, block, shared bytes, words, kinds, slots), a slot >= 0 naming the call's buffer "
      "(arguments, then results) whose address replaces the word; args and rets: each buffer's byte size.");
  m.def(
      "xla_release_plan",
      [](int32_t handle) { plans.release(handle); },
      py::arg("handle"));
  m.def(
      "xla_plan_handlers",
      []() {
        py::dict d;
        d["CUDA"] = py::capsule(reinterpret_cast<void*>(&cuda_call));
        d["cpu"] = py::capsule(reinterpret_cast<void*>(&shim_call));
        return d;
      },
      "XLA FFI handlers (PyCapsules) running a registered plan, by platform: 'CUDA' on XLA's stream, 'cpu' "
      "on the launch shim.");
}

}  // namespace cule::bindings
