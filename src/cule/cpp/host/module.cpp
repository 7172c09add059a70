// pybind11 module cule._core: the CPU backend of the emulator core.
#include "bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "cule emulator core (CPU backend)";
  cule::bindings::bind_core(m);
  cule::bindings::bind_emulator(m);
  cule::bindings::bind_shim(m);
  cule::bindings::bind_xla(m);
  cule::bindings::bind_xla_plan(m);
}
