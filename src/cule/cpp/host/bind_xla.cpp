// XLA FFI handlers: the CPU backend's step and reset called by XLA on XLA's
// buffers, so a jitted JAX program (cule.jax.make) steps the emulator with
// no host round trip through Python and no copy of the observations.
//
// An emulator is named to XLA by a handle, an index into a registry filled
// from Python. Each call takes a state array int32[2] = {handle, calls} and
// returns it with `calls` + 1: JAX programs thread it from call to call, so
// the data dependence orders the calls, as the emulator's state (which lives
// outside XLA) needs.
#include <pybind11/pybind11.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "emulator.hpp"
#include "xla_ffi.hpp"

namespace cule::bindings {

namespace {

struct Registered {
  cule::Emulator* emulator;
  int threads;
  std::vector<int32_t> ids;    // 0 .. N-1: every call steps the whole batch
  std::vector<int32_t> noops;  // the actions of a reset
};

xla::Registry<Registered> registry("emulator");

struct BadCall : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// numpy's name of an XLA_FFI_DataType (xla/ffi/api/c_api.h), for the errors
std::string dtype_name(int dtype) {
  static const char* const kNames[] = {"invalid", "bool",   "int8",    "int16",   "int32",   "int64",  "uint8",
                                       "uint16",  "uint32", "uint64",  "float16", "float32", "float64"};
  return dtype >= 0 && dtype < (int)(sizeof(kNames) / sizeof(kNames[0])) ? kNames[dtype]
                                                                         : "XLA type " + std::to_string(dtype);
}

const xla::Buffer* buffer(const xla::List& list, int64_t i, xla::DataType dtype, size_t elements,
                          const char* what) {
  if (list.types[i] != 1) throw BadCall(std::string("cule: ") + what + " is not a buffer");
  const auto* b = static_cast<const xla::Buffer*>(list.items[i]);
  size_t count = 1;
  for (int64_t d = 0; d < b->rank; ++d) count *= (size_t)b->dims[d];
  if (b->dtype != dtype || count != elements)
    throw BadCall(std::string("cule: ") + what + " is " + dtype_name(b->dtype) + " with " + std::to_string(count) +
                  " elements; expected " + dtype_name(dtype) + " with " + std::to_string(elements));
  return b;
}

template <typename T>
constexpr xla::DataType dtype_of() {
  return sizeof(T) == 1 ? xla::kPred : xla::kS32;  // step outputs are bool or int32 (CULE_STEP_OUTPUTS)
}

constexpr int kOutputs = 0
#define CULE_COUNT_OUTPUT(type, name, element, field) +1
    CULE_STEP_OUTPUTS(CULE_COUNT_OUTPUT)
#undef CULE_COUNT_OUTPUT
    ;

// args: state int32[2], then actions (ALE ids, int32[N]) or, for a reset, seeds (int32[N], < 0: keep).
// rets: state int32[2], obs uint8[N, ...], then the step outputs in CULE_STEP_OUTPUTS order.
template <bool kReset>
xla::Error* handle_call(xla::CallFrame* frame) {
  if (xla::answer_metadata(frame) || frame->stage != xla::kExecute) return nullptr;
  xla::ErrorCode code = xla::kInvalidArgument;
  std::string message;
  try {
    if (frame->args.size != 2 || frame->rets.size != 2 + kOutputs)
      throw BadCall("cule: the call has " + std::to_string(frame->args.size) + " arguments and " +
                    std::to_string(frame->rets.size) + " results; expected 2 and " + std::to_string(2 + kOutputs));
    const auto* state = buffer(frame->args, 0, xla::kS32, 2, "the state argument");
    const int32_t* handle = static_cast<const int32_t*>(state->data);
    const std::shared_ptr<Registered> r = registry.get(handle[0]);
    const int n = r->emulator->num_envs();
    const auto* in = buffer(frame->args, 1, xla::kS32, (size_t)n, kReset ? "seeds" : "actions");
    auto* next = static_cast<int32_t*>(buffer(frame->rets, 0, xla::kS32, 2, "the state result")->data);
    cule::StepOutputs out{};
    out.obs = static_cast<uint8_t*>(
        buffer(frame->rets, 1, xla::kU8, (size_t)n * r->emulator->stacked_bytes(), "the observations")->data);
    out.final_obs = nullptr;
    int k = 2;
#define CULE_XLA_OUTPUT(type, name, element, field) \
  out.name = static_cast<type*>(buffer(frame->rets, k++, dtype_of<element>(), (size_t)n, #name)->data);
    CULE_STEP_OUTPUTS(CULE_XLA_OUTPUT)
#undef CULE_XLA_OUTPUT
    const int32_t* values = static_cast<const int32_t*>(in->data);
    // cule.jax always reseeds: a seed below 0 ("keep") on a console never powered on would reset forever
    for (int i = 0; kReset && i < n; ++i)
      if (values[i] < 0)
        throw BadCall("cule: seed " + std::to_string(values[i]) + " of environment " + std::to_string(i) +
                      " is below 0; seeds lie in [0, 2**31 - 1]");
    code = xla::kInternal;
    if (kReset) {
      std::vector<int64_t> seeds(values, values + n);
      r->emulator->vector_run(r->ids.data(), n, r->noops.data(), seeds.data(), true, r->threads);
    } else {
      r->emulator->vector_run(r->ids.data(), n, values, nullptr, false, r->threads);
    }
    auto gather = r->emulator->prepare_gather(r->ids.data(), n, out, nullptr);
    cule::run_batches(r->emulator->pool(), std::vector<decltype(gather)>{gather}, std::vector<int>{n});
    next[0] = handle[0];
    next[1] = handle[1] + 1;
    return nullptr;
  } catch (const std::exception& e) {
    message = e.what();
  }
  return xla::make_error(frame, code, message);
}

xla::Error* xla_step(xla::CallFrame* frame) { return handle_call<false>(frame); }
xla::Error* xla_reset(xla::CallFrame* frame) { return handle_call<true>(frame); }

}  // namespace

void bind_xla(py::module_& m) {
  m.def(
      "xla_register",
      [](cule::Emulator& emulator, int threads) {
        auto r = std::make_shared<Registered>();
        r->emulator = &emulator;
        r->threads = threads;
        for (int i = 0; i < emulator.num_envs(); ++i) r->ids.push_back(i), r->noops.push_back(0);
        return registry.add(r);
      },
      py::arg("emulator"), py::arg("threads"),
      "Names `emulator` to XLA's handlers by the handle returned; the caller keeps the emulator alive until "
      "xla_release(handle).");
  m.def(
      "xla_release",
      [](int32_t handle) { registry.release(handle); },
      py::arg("handle"));
  m.def(
      "xla_handlers",
      []() {
        py::dict d;
        d["cule_step"] = py::capsule(reinterpret_cast<void*>(&xla_step));
        d["cule_reset"] = py::capsule(reinterpret_cast<void*>(&xla_reset));
        return d;
      },
      "XLA FFI handlers (PyCapsules) for jax.ffi.register_ffi_target, platform cpu.");
}

}  // namespace cule::bindings
