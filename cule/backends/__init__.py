"""Backends that run the emulator core: cpu (pybind11 extension) and, later, cuda."""
