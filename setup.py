"""Builds the CPU backend, the pybind11 extension cule._core.

The emulator core is header-only (cule/cpp/*.hpp); this compiles its one
binding translation unit with g++ in well under a minute on two cores.
"""
from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup

core = Pybind11Extension(
    "cule._core",
    ["cule/cpp/bindings.cpp"],
    include_dirs=["cule/cpp"],
    cxx_std=17,
    # fp-contract off: the resize must round as OpenCV does, product and sum apart.
    extra_compile_args=["-O3", "-Wall", "-Wno-unused-function", "-ffp-contract=off"],
)

setup(ext_modules=[core], cmdclass={"build_ext": build_ext})
