"""Backends that run the emulator core: cpu (the pybind11 extension's threads) and cuda (NVRTC kernels)."""
