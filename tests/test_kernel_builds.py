"""Prebuilt kernels: what a build's key covers, and which binary the CUDA backend loads.

No GPU and no nvcc needed: CuPy is replaced by a stand-in that records what
it was asked to load (tests/test_kernels_compile.py runs the real build).
"""
import json
import shutil
import sys
import types

import pytest

import cule.kernels as kernels
from cule.kernels import KernelBuild, nvrtc


@pytest.fixture
def headers(tmp_path, monkeypatch):
    """A private copy of the core headers, so a test can edit one."""
    copy = tmp_path / "cpp"
    shutil.copytree(kernels.CORE_HEADERS, copy, ignore=shutil.ignore_patterns("*.cpp"))
    monkeypatch.setattr(kernels, "CORE_HEADERS", copy)
    return copy


def test_key_covers_headers_options_and_architecture(headers):
    build = KernelBuild("2K")
    key = build.key("sm_90")
    assert key == KernelBuild("2K").key("sm_90")
    others = {"sm_80": build.key("sm_80"), "F8": KernelBuild("F8").key("sm_90"),
              "pong compiled in": KernelBuild("2K", "pong").key("sm_90"),
              "step compiled in": KernelBuild("2K", None, False).key("sm_90"),
              "gymnasium step": KernelBuild("2K", None, True).key("sm_90")}
    assert len(set(others.values()) | {key}) == len(others) + 1, others
    for header in (headers / "chips" / "tia.hpp", headers / "ale" / "games" / "list.inc"):
        original = header.read_text()
        header.write_text(original + "\n// edited\n")
        assert build.key("sm_90") != key, header.name
        header.write_text(original)
        assert build.key("sm_90") == key


def test_defines_name_what_is_compiled_in():
    assert KernelBuild("F8").defines() == ["-DCULE_CART=cule::CartF8"]
    assert KernelBuild("2K", "pong", True).defines() == [
        "-DCULE_CART=cule::Cart2K", "-DCULE_GAMES=cule::OneGame<cule::games::Pong>", "-DCULE_STEP=cule::GymnasiumStep"]
    with pytest.raises(ValueError, match="no game unit"):
        KernelBuild("2K", "no_such_game").defines()


class FakeCupy(types.ModuleType):
    """Records RawModule's arguments; get_function returns the kernel's name, or raises CuPy's CompileException
    with the message `error(options)` gives, where it gives one."""

    def __init__(self):
        super().__init__("cupy")
        self.loaded, self.options, self.error = [], [], None
        fake = self

        class CompileException(Exception):
            pass

        class RawModule:
            def __init__(self, code=None, options=(), backend=None, path=None):
                fake.loaded.append("nvrtc" if path is None else path)
                fake.options.append(tuple(options))
                self.options = options

            def get_function(self, name):
                if fake.error and (message := fake.error(self.options)):
                    raise CompileException(message)
                return name

        class Device:
            def __init__(self, index):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        self.RawModule = RawModule
        self.cuda = types.SimpleNamespace(Device=Device,
                                          compiler=types.SimpleNamespace(CompileException=CompileException))


@pytest.fixture
def fake_cupy(monkeypatch, tmp_path):
    from cule.backends import cuda

    fake = FakeCupy()
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(nvrtc, "library", lambda: None)  # CuPy's NVRTC; a test gives cule's its own stand-in
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(kernels.KERNEL_DIR_VARIABLE, raising=False)
    cuda.load_kernels.cache_clear()
    yield fake
    cuda.load_kernels.cache_clear()


def load(build, arch="sm_90"):
    from cule.backends import cuda
    cuda.load_kernels.cache_clear()
    functions, source = cuda.load_kernels(build, 0, arch)
    assert functions == cuda.KERNELS
    return source


def test_loader_takes_a_matching_binary_and_nothing_else(fake_cupy, tmp_path, monkeypatch, headers):
    build = KernelBuild("2K")
    assert load(build) == "nvrtc"  # nothing built: NVRTC
    folder = tmp_path / "prebuilt"
    folder.mkdir()
    monkeypatch.setenv(kernels.KERNEL_DIR_VARIABLE, str(folder))
    # another architecture's, another mapper's and another build's binaries are not this one
    for other, arch in ((build, "sm_80"), (KernelBuild("F8"), "sm_90"), (KernelBuild("2K", "pong"), "sm_90")):
        (folder / other.file_name(arch)).write_bytes(b"other")
    assert load(build) == "nvrtc"
    present = folder / build.file_name("sm_90")
    present.write_bytes(b"cubin")
    assert load(build) == str(present)
    assert fake_cupy.loaded[-1] == str(present)
    # a header edit makes the binary stale: it is not loaded, NVRTC builds the edited source
    tia = headers / "chips" / "tia.hpp"
    tia.write_text(tia.read_text() + "\n// edited\n")
    assert load(build) == "nvrtc"


def test_nvrtc_gets_ptxas_threads_where_it_knows_the_option(fake_cupy):
    build = KernelBuild("F8")
    assert load(build) == "nvrtc"
    assert fake_cupy.options == [(*build.options(), *kernels.NVRTC_PARALLEL)]
    # an NVRTC without the option refuses it by name: the same build, on one thread
    fake_cupy.options.clear()
    fake_cupy.error = lambda options: (f"nvrtc: error: unrecognized option {kernels.NVRTC_PARALLEL[0]} found"
                                       if kernels.NVRTC_PARALLEL[0] in options else None)
    assert load(build) == "nvrtc"
    assert fake_cupy.options == [(*build.options(), *kernels.NVRTC_PARALLEL), build.options()]
    # any other error is the user's to see, and is not compiled twice
    fake_cupy.options.clear()
    fake_cupy.error = lambda options: "kernels.cu(12): error: identifier \"x\" is undefined"
    with pytest.raises(Exception, match="is undefined"):
        load(build)
    assert fake_cupy.options == [(*build.options(), *kernels.NVRTC_PARALLEL)]


def test_a_first_use_compiles_into_the_user_cache_and_later_runs_load_it(fake_cupy, monkeypatch):
    built = []

    def build_binary(build, arch, folder):  # NVRTC's compile, its bytes made up
        built.append((build, arch))
        return kernels.save_binary(build, arch, folder, b"cubin of " + build.label.encode(), compiler="NVRTC 12.9")

    monkeypatch.setattr(nvrtc, "library", lambda: object())
    monkeypatch.setattr(nvrtc, "version", lambda: "12.9")
    monkeypatch.setattr(nvrtc, "supported_archs", lambda: ["sm_80", "sm_90"])
    monkeypatch.setattr(nvrtc, "build_binary", build_binary)
    build = KernelBuild("F8")
    path = kernels.user_cache_dir() / build.file_name("sm_90")
    assert load(build) == str(path) and path.read_bytes() == b"cubin of F8-any-any"
    assert json.loads(path.with_suffix(".json").read_text())["key"] == build.key("sm_90")
    assert kernels.find_binary(build, "sm_90") == path and built == [(build, "sm_90")]
    assert load(build) == str(path) and built == [(build, "sm_90")]  # a later run: found, not compiled
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".partial")]
    # an architecture this NVRTC does not know: CuPy's NVRTC, to PTX for the driver
    assert load(build, "sm_200") == "nvrtc" and len(built) == 1


def test_an_nvrtc_too_old_to_list_its_architectures_leaves_the_compile_to_cupy(fake_cupy, monkeypatch):
    from cule.backends import cuda

    class OldNvrtc:  # the library of an NVRTC before CUDA 11.2: no nvrtcGetSupportedArchs
        pass

    monkeypatch.setattr(nvrtc, "library", lambda: OldNvrtc())
    monkeypatch.setattr(nvrtc, "version", lambda: "11.1")
    with pytest.raises(nvrtc.NvrtcError, match="NVRTC 11.1 cannot list"):
        nvrtc.supported_archs()
    assert cuda.compile_into_cache(KernelBuild("F8"), "sm_90") is None
    assert load(KernelBuild("F8")) == "nvrtc"


def test_processes_wanting_one_build_compile_it_once(fake_cupy, monkeypatch):
    """torchrun's ranks start together: one compiles, the others wait for its binary (a lock file per build)."""
    import threading
    import time as clock

    from cule.backends import cuda

    built = []

    def build_binary(build, arch, folder):
        built.append(build)
        clock.sleep(0.5)  # the others arrive while it compiles
        return kernels.save_binary(build, arch, folder, b"cubin", compiler="NVRTC 12.9")

    monkeypatch.setattr(nvrtc, "library", lambda: object())
    monkeypatch.setattr(nvrtc, "version", lambda: "12.9")
    monkeypatch.setattr(nvrtc, "supported_archs", lambda: ["sm_90"])
    monkeypatch.setattr(nvrtc, "build_binary", build_binary)
    paths = []
    ranks = [threading.Thread(target=lambda: paths.append(cuda.compile_into_cache(KernelBuild("E0"), "sm_90")))
             for _ in range(4)]
    for rank in ranks:
        rank.start()
    for rank in ranks:
        rank.join()
    assert built == [KernelBuild("E0")]
    assert paths == [kernels.user_cache_dir() / KernelBuild("E0").file_name("sm_90")] * 4


def test_a_mixed_batchs_mappers_compile_side_by_side(fake_cupy, monkeypatch):
    import threading

    from cule.backends import cuda

    monkeypatch.setattr(cuda, "device_arch", lambda index=0: "sm_90")
    together = threading.Barrier(2, timeout=20)  # each kernel's compile waits for another mapper's
    fake_cupy.error = lambda options: together.wait() and None
    cuda.load_many([KernelBuild("2K"), KernelBuild("F8"), KernelBuild("2K")], 0)
    assert fake_cupy.loaded == ["nvrtc", "nvrtc"]
    # the launchers' own calls find them loaded
    fake_cupy.error = None
    assert cuda.load_kernels(KernelBuild("F8"), 0)[0] == cuda.KERNELS
    assert cuda.load_kernels(KernelBuild("2K"), 0)[1] == "nvrtc" and len(fake_cupy.loaded) == 2


def test_loader_searches_the_variable_then_the_user_cache(fake_cupy, tmp_path, monkeypatch):
    build = KernelBuild("4K")
    cache = kernels.user_cache_dir()
    assert cache == tmp_path / "cache" / "cule" / "kernels"
    cache.mkdir(parents=True)
    (cache / build.file_name("sm_90")).write_bytes(b"cached")
    assert load(build) == str(cache / build.file_name("sm_90"))
    first, second = tmp_path / "a", tmp_path / "b"
    second.mkdir()
    (second / build.file_name("sm_90")).write_bytes(b"named")
    monkeypatch.setenv(kernels.KERNEL_DIR_VARIABLE, f"{first}{kernels.os.pathsep}{second}")
    assert kernels.search_dirs() == [first, second, cache]
    assert load(build) == str(second / build.file_name("sm_90"))


def test_launcher_reports_its_source(fake_cupy, monkeypatch, caplog):
    import logging

    import torch

    from cule.backends import cuda

    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: types.SimpleNamespace(
        multi_processor_count=132))
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda index=0: (9, 0))
    with caplog.at_level(logging.DEBUG, logger="cule.backends.cuda"):
        launcher = cuda.CudaLauncher(KernelBuild("F8"), torch.device("cuda", 0))
    assert launcher.source == "nvrtc" and launcher.sms == 132
    assert "cule kernels F8-any-any for sm_90: nvrtc" in caplog.text
    assert launcher.build == KernelBuild("F8")


def test_an_nvrtc_without_ptxas_options_compiles_on_one_thread(monkeypatch, tmp_path):
    calls = []

    def compile_kernels(build, arch, extra=()):
        calls.append(extra)
        if extra:
            raise nvrtc.NvrtcError(f"NVRTC could not compile the 2K-any-any kernels for {arch}: "
                                   f"NVRTC_ERROR_INVALID_OPTION\nnvrtc: error: unrecognized option {extra[0]} found")
        return b"cubin", ""

    monkeypatch.setattr(nvrtc, "compile_kernels", compile_kernels)
    monkeypatch.setattr(nvrtc, "version", lambda: "12.0")
    record = nvrtc.build_binary(KernelBuild("2K"), "sm_80", tmp_path)
    assert record["path"].read_bytes() == b"cubin" and record["ptxas_threads"] == 1
    assert calls == [("--ptxas-options=--split-compile=0",), ()]
    # a source error is not retried
    monkeypatch.setattr(nvrtc, "compile_kernels", lambda *a: (_ for _ in ()).throw(nvrtc.NvrtcError("error: x")))
    with pytest.raises(nvrtc.NvrtcError, match="error: x"):
        nvrtc.build_binary(KernelBuild("2K"), "sm_80", tmp_path)
