"""The CUDA backend: the batch's arrays as torch tensors on a device, stepped by cule/kernels/kernels.cu.

The host ``cule._core.Emulator`` builds every array once (power-on state,
ROM, palettes, resize taps, per-environment state); they are copied to the
device, and a ``BatchView`` (cule/cpp/vector/vector.hpp) holding their device
addresses is copied beside them. The per-environment consoles and ALE states
(``Emulator.lane_arrays()``) are kept in lane layout (cule/cpp/common.hpp): tiles
of a warp's 32 environments, word w of lane l at tile word 32 w + l, so that a
warp's loads of one field coalesce. From then on a step is four kernel launches
on torch's current stream (kernels.cu: cule_run, the state update, which
records the TIA writes of the frames a step shows; cule_render, which replays
them into frames and preprocesses them; cule_reset, the resets of the episodes
that ended, packed together; cule_gather, the outputs), with actions, outputs
and flags staying on the device: no host transfer, no synchronisation.

Kernels are built per mapper (cule.kernels.KernelBuild): the game and the
step policy are read from the batch. A binary prebuilt by ``python -m
cule.kernels --build`` whose key matches is loaded from $CULE_KERNEL_DIR or
the user's cache folder; otherwise NVRTC compiles the kernels at first use
into that folder (cule.kernels.nvrtc), so that later runs find them there,
or, where that NVRTC is missing or does not know the GPU, through CuPy,
which caches them on disk (``CUPY_CACHE_DIR``, default
``~/.cupy/kernel_cache``). The same launch code runs on the CPU with the host
launch shim (``_core.shim_launch``), which is how the tests check this path
without a GPU.
"""
from __future__ import annotations

import concurrent.futures
import fcntl
import functools
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

from .. import _core, continuous
from ..errors import CudaUnavailableError
from ..kernels import NVRTC_PARALLEL, KernelBuild, find_binary, kernel_source, user_cache_dir
from . import Backend, StepResult, check_action_batch, result_column, torch_dtype

THREADS_PER_BLOCK = _core.threads_per_block  # cule/cpp/vector/kernel_abi.hpp: two warps
WARP = 32
# The emulating kernels aim at this many warps per SM: two for each of an
# SM's four warp schedulers, so one warp's wait can be hidden by another's work.
WARPS_PER_SM = 8
# Each kernel's parameters, (name, C++ type, "pointer" or "int32"), in order: cule/cpp/vector/kernel_abi.hpp.
SIGNATURES: dict[str, tuple[tuple[str, str, str], ...]] = {
    name: tuple(tuple(p) for p in params) for name, params in _core.kernel_signatures.items()}
KERNELS = tuple(SIGNATURES)
# The names of a batch's arrays (cule/cpp/host/emulator.hpp CULE_BATCH_ARRAYS): ARRAY.machines == "machines", and
# a name the core does not declare is an AttributeError.
ARRAY = SimpleNamespace(**{name: name for name in _core.batch_arrays})
_KIND_CODES = {"pointer": 1, "int32": 2}  # the launch shim's ArgKind
# Render log room per environment (cule/cpp/chips/render_log.hpp): TIA accesses
# (8 bytes each) of the frames one step records. A step that needs more is
# drawn by the state update instead (counted in CudaBackend.render_stats()).
LOG_ACCESSES_PER_ENV = 8192
# NVRTC compiles of a mixed batch's mappers at a time (load_many).
NVRTC_AT_ONCE = 4
# Lane layout of the per-environment state on the device (cule/cpp/common.hpp).
LANES = _core.device_lanes


def check_cuda(device: torch.device) -> None:
    """Raises CudaUnavailableError naming what is missing for `device`."""
    if not torch.cuda.is_available():
        build = torch.version.cuda
        raise CudaUnavailableError(
            f"device {str(device)!r} needs a CUDA GPU, but torch sees none "
            f"({'this torch is a CPU build: install a CUDA build of torch 2.13.0' if build is None else 'no GPU or driver found'}); "
            f"use device='cpu'")
    if device.index is not None and device.index >= torch.cuda.device_count():
        raise CudaUnavailableError(f"device {str(device)!r}: only {torch.cuda.device_count()} GPU(s) are visible")
    try:
        import cupy  # noqa: F401
    except ImportError as e:
        raise CudaUnavailableError("device='cuda' compiles its kernels with NVRTC through CuPy: "
                                   "pip install 'cule[cuda]' (adds cupy-cuda12x)") from e


log = logging.getLogger(__name__)


def device_arch(device_index: int = 0) -> str:
    """The device's architecture as nvcc names it (``sm_90`` on an H100)."""
    major, minor = torch.cuda.get_device_capability(device_index)
    return f"sm_{major}{minor}"


@functools.lru_cache(maxsize=None)
def load_kernels(build: KernelBuild, device_index: int = 0, arch: str | None = None):
    """The kernels (KERNELS) of `build` on a device: a matching prebuilt binary if one is found, else the one
    NVRTC compiles now into the user cache folder (compile_into_cache), else CuPy's NVRTC (or its disk cache
    of an earlier compile). Returns (functions, source), source being the binary's path or "nvrtc" (CuPy's).
    Loaded once per process and device: every env of the build shares them."""
    import cupy

    arch = arch or device_arch(device_index)
    path = find_binary(build, arch) or compile_into_cache(build, arch)
    with cupy.cuda.Device(device_index):
        if path is not None:
            module, source = cupy.RawModule(path=str(path)), str(path)
            functions = tuple(module.get_function(name) for name in KERNELS)
        else:
            functions, source = nvrtc_functions(cupy, build), "nvrtc"
    log.debug("cule kernels %s for %s: %s", build.label, arch, source)
    return functions, source


def compile_into_cache(build: KernelBuild, arch: str) -> Path | None:
    """Where no binary was built ahead of time: NVRTC's cubin of `build` for `arch`, kept in the user cache
    folder (a temporary one where that cannot be written), so that later runs load it as a prebuilt binary.
    None where the NVRTC library is missing or does not know `arch`: CuPy's NVRTC compiles then."""
    from ..kernels import nvrtc

    try:
        if nvrtc.library() is None or arch not in nvrtc.supported_archs():
            return None
    except nvrtc.NvrtcError:  # an NVRTC too old to list its architectures
        return None
    folder = user_cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        writable = os.access(folder, os.W_OK)
    except OSError:
        writable = False
    if not writable:
        folder = Path(tempfile.mkdtemp(prefix="cule-kernels-"))
    # One process compiles; the others that want the same build (torchrun's ranks) wait for it, then load it.
    with open(folder / f".{build.file_name(arch)}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / build.file_name(arch)).is_file():
            return folder / build.file_name(arch)
        log.warning("cule: no prebuilt %s kernels for %s; compiling them with NVRTC %s into %s, once (about two "
                    "minutes on 2 cores; `python -m cule.kernels --build GAME --arch %s` builds them ahead of "
                    "time)", build.label, arch, nvrtc.version(), folder, arch)
        return nvrtc.build_binary(build, arch, folder)["path"]


def load_many(builds: list[KernelBuild], device_index: int = 0) -> None:
    """Puts `builds` in load_kernels' cache side by side, so that a mixed batch's mappers compile together at
    first use instead of one after another (NVRTC runs without the GIL, through ctypes or CuPy). At most
    NVRTC_AT_ONCE at a time: each compile of the kernels holds about 4 GB."""
    builds = list(dict.fromkeys(builds))
    if len(builds) < 2:
        return
    with concurrent.futures.ThreadPoolExecutor(min(NVRTC_AT_ONCE, len(builds))) as pool:
        list(pool.map(lambda build: load_kernels(build, device_index), builds))


def nvrtc_functions(cupy, build: KernelBuild) -> tuple:
    """KERNELS of `build` compiled by NVRTC through CuPy (at the first get_function), with ptxas's threads,
    or without them where this NVRTC does not know the option."""
    for extra in (NVRTC_PARALLEL, ()):
        module = cupy.RawModule(code=kernel_source(), options=(*build.options(), *extra), backend="nvrtc")
        try:
            return tuple(module.get_function(name) for name in KERNELS)
        except cupy.cuda.compiler.CompileException as error:
            if not extra or "unrecognized option" not in str(error):
                raise
            log.debug("this NVRTC has no %s; compiling on one thread", " ".join(extra))


@dataclass(frozen=True)
class Geometry:
    """kernel<<<grid, block, shared_bytes>>> with `per_warp` working threads in each warp."""

    grid: int
    block: int
    shared_bytes: int
    per_warp: int


def launch_geometry(count: int, sms: int) -> Geometry:
    """How cule_run and cule_reset cover `count` environments on a device with `sms` SMs.

    Each environment gets its own thread, and each warp the first `per_warp`
    of its lanes, so that every SM holds at least WARPS_PER_SM warps when the
    batch has that many environments: per_warp = count / (sms x
    WARPS_PER_SM), rounded down, between 1 and 32. On an H100 (132 SMs)
    1,024 environments run one per warp, 4,096 three per warp, and from
    33,792 on every warp is full.
    Divergent 6507 code runs its lanes' paths one after another anyway, so a
    warp with few lanes loses little, while an idle SM loses everything. Each
    block gets a shared-memory slot (cule/cpp/vector/vector.hpp MachineSlot) per
    working thread for its environment's console.
    """
    if count < 0 or sms <= 0:
        raise ValueError(f"need count >= 0 and sms > 0, got {count}, {sms}")
    per_warp = min(WARP, max(1, count // (sms * WARPS_PER_SM)))
    warps = -(-count // per_warp)
    warps_per_block = THREADS_PER_BLOCK // WARP
    grid = max(1, -(-warps // warps_per_block))
    return Geometry(grid, THREADS_PER_BLOCK, warps_per_block * per_warp * _core.machine_slot_bytes, per_warp)


def whole_warps(count: int) -> Geometry:
    """cule_render and cule_gather: one environment per thread, whole warps (their work is alike)."""
    return Geometry(max(1, -(-count // THREADS_PER_BLOCK)), THREADS_PER_BLOCK, 0, WARP)


def kernel_arguments(kernel: str, args: dict) -> list[tuple[int, str]]:
    """(value, kind) of each of `kernel`'s parameters in order, from `args` by name: a pointer from a tensor
    (its data_ptr), an address or None (null); an int32 from an int in range. Raises TypeError naming the
    parameters when one is missing, unknown or of the wrong kind."""
    params = SIGNATURES[kernel]
    names = [name for name, _, _ in params]
    if set(args) != set(names):
        raise TypeError(f"{kernel} takes {', '.join(names)}; got {', '.join(args)}")
    out = []
    for name, ctype, kind in params:
        value = args[name]
        if kind == "pointer":
            if isinstance(value, torch.Tensor):
                value = value.data_ptr()
            elif value is None:
                value = 0
            elif not isinstance(value, (int, np.integer)) or isinstance(value, bool):
                raise TypeError(f"{kernel}'s {name} is a {ctype}: pass a tensor, an address or None, "
                                f"not {type(value).__name__}")
        elif isinstance(value, (torch.Tensor, float)) or not -2**31 <= int(value) < 2**31:
            raise TypeError(f"{kernel}'s {name} is an int32_t: got {value!r}")
        out.append((int(value), kind))
    return out


class Launcher:
    """What launch_step drives: ``launch(kernel, geometry, **args)``, ``sms`` and ``zero(tensor)``, which clears
    a tensor in the launches' order (here on the tensor's own device and stream; cule.jax records it instead)."""

    sms: int

    def launch(self, kernel: str, geometry: Geometry, **args) -> None:
        raise NotImplementedError

    def zero(self, tensor: torch.Tensor) -> None:
        tensor.zero_()


class CudaLauncher(Launcher):
    """The kernels of one build, launched on torch's current stream.

    ``launch(kernel, geometry, **args)``: kernel<<<geometry>>>(args), the
    arguments by the names of kernel_abi.hpp's lists (kernel_arguments).
    ``source`` says where the kernels came from: a prebuilt binary's path, or
    "nvrtc".
    """

    def __init__(self, build: KernelBuild, device: torch.device):
        self.device = device
        self.build = build
        self.sms = torch.cuda.get_device_properties(device).multi_processor_count
        functions, self.source = load_kernels(build, device.index or 0)
        self._kernels = dict(zip(KERNELS, functions))

    def launch(self, kernel: str, geometry: Geometry, **args) -> None:
        import cupy

        words = tuple(np.int32(v) if kind == "int32" else np.uint64(v) for v, kind in kernel_arguments(kernel, args))
        stream = torch.cuda.current_stream(self.device)
        with cupy.cuda.ExternalStream(stream.cuda_stream, self.device.index or 0):
            self._kernels[kernel]((geometry.grid,), (geometry.block,), words, shared_mem=geometry.shared_bytes)

    def function(self, kernel: str) -> int:
        """The CUfunction handle of `kernel` (for launches that do not go through Python: cule.jax)."""
        loaded = self._kernels[kernel]
        return int(getattr(loaded, "kernel", loaded).ptr)  # CuPy's RawKernel holds the driver's Function


class ShimLauncher(Launcher):
    """The same kernels compiled for the host (cule/kernels/shim.hpp): grid and block as loops.

    `sms` stands in for the device's SM count in the launch geometry (default: an H100's). With
    `device_code` the kernels are the device's code built by the host compiler (cule.kernels.device_shim),
    else the host's, as cule._core holds them.
    """

    def __init__(self, cart: str, sms: int = _core.shim_sms, device_code: bool = False):
        self.cart = cart
        self.sms = sms
        if device_code:
            from ..kernels import device_shim
            self._launch = device_shim.launcher(cart)
        else:
            self._launch = functools.partial(_core.shim_launch, cart)

    def launch(self, kernel: str, geometry: Geometry, **args) -> None:
        values = kernel_arguments(kernel, args)
        self._launch(kernel, geometry.grid, geometry.block, [v & (2**64 - 1) for v, _ in values],
                     [_KIND_CODES[kind] for _, kind in values])


def launch_step(launcher, views: int, refs: torch.Tensor, actions: torch.Tensor, seeds: torch.Tensor | None,
                force_reset: bool, reset_count: torch.Tensor) -> None:
    """State update, render pass and resets of the environments `refs` (int32 [n] references, cule/cpp/vector/
    vector.hpp env_ref) of the BatchViews at device address `views`, queued on torch's current stream."""
    n = refs.numel()
    emulating = launch_geometry(n, launcher.sms)
    launcher.zero(reset_count)
    launcher.launch("cule_run", emulating, batches=views, refs=refs, count=n, actions=actions, seeds=seeds,
                    force_reset=int(force_reset), per_warp=emulating.per_warp)
    launcher.launch("cule_render", whole_warps(n), batches=views, refs=refs, count=n)
    # cule_run's geometry: as many working threads, since the count of resets stays on the device
    launcher.launch("cule_reset", emulating, batches=views, per_warp=emulating.per_warp)


def launch_gather(launcher, views: int, refs: torch.Tensor, obs_shape: tuple[int, ...], same_step: bool,
                  device: torch.device) -> tuple[torch.Tensor, list[torch.Tensor], torch.Tensor | None]:
    """(obs, the step outputs in _core.step_outputs' order, final_obs or None) of environments `refs`."""
    n = refs.numel()
    obs = torch.empty((n, *obs_shape), dtype=torch.uint8, device=device)
    final_obs = torch.empty_like(obs) if same_step else None
    outputs = {name: torch.empty(n, dtype=torch_dtype(dtype), device=device)
               for name, dtype in _core.step_outputs.items()}
    launch_gather_into(launcher, views, refs, obs, outputs, final_obs)
    return obs, list(outputs.values()), final_obs


def launch_gather_into(launcher, views: int, refs: torch.Tensor, obs, outputs: dict, final_obs) -> None:
    """cule_gather of environments `refs` into `obs` and `outputs` (_core.step_outputs' names), and `final_obs`
    (or None)."""
    launcher.launch("cule_gather", whole_warps(refs.numel()), batches=views, refs=refs, count=refs.numel(),
                    obs=obs, **outputs, final_obs=final_obs)


class CudaBackend(Backend):
    """A batch of environments whose state lives in torch tensors on `device`.

    Actions, outputs and flags stay on the device: nothing here waits for
    it. Actions given on the host are checked there at once; an action
    already on the device outside the action set is played as NOOP and
    reported at the next reset (check_deferred).
    """

    def __init__(self, emulator, device: torch.device, launcher, *, action_set: np.ndarray,
                 obs_shape: tuple[int, ...], frameskip: int, start_cache: bool = False,
                 log_accesses: int | None = None, continuous_threshold: float | None = None):
        self.emulator = emulator
        self.continuous_threshold = continuous_threshold
        self._joystick = torch.as_tensor(continuous.JOYSTICK.ravel(), device=device)
        self.device = device
        self.launcher = launcher
        self.obs_shape = obs_shape
        self.start_cache = start_cache
        self.arrays: dict[str, torch.Tensor] = {}
        self._action_set = torch.as_tensor(action_set, device=device)
        self._ids: dict[bytes, torch.Tensor] = {}
        self._bad_action = torch.zeros((), dtype=torch.bool, device=device)
        self._lane_items = emulator.lane_arrays()  # name -> bytes per struct
        self.version = 0  # counts uploads, which move arrays
        # The render log and the reset list. A step records at most its
        # frameskip frames twice (the first try and the redraw after a short frame).
        device_bytes = emulator.device_arrays(2 * frameskip, log_accesses or LOG_ACCESSES_PER_ENV)
        for name, size in device_bytes.items():
            self.arrays[name] = torch.zeros(size, dtype=torch.uint8, device=device)
        self.upload()

    def upload(self, names: list[str] | None = None) -> None:
        """Copies the host arrays (all, or `names`) to the device and rebuilds the BatchView."""
        for name, host in self.emulator.arrays().items():
            if self.device.type == "cuda" and name in _core.host_loop_arrays:
                continue  # left null in the BatchView: the GPU's kernels never read it
            if names is None or name in names:
                item = self._lane_items.get(name)
                if item is not None:
                    data = _core.to_lanes(host, item, LANES)
                else:  # a GPU copy is a copy already; on the shim the tensor must not share the host's memory
                    data = host if self.device.type == "cuda" else host.copy()
                self.arrays[name] = torch.from_numpy(data).to(self.device)
        self.view = self.batch_view()
        self.version += 1  # views built from the old addresses (CudaGroup) are stale

    def batch_view(self, batch_index: int = 0, **moved: int) -> torch.Tensor:
        """This batch's BatchView on the device: its arrays' addresses, those named in `moved` replaced
        (a group's shared reset list), as the `batch_index`-th of the views launched together."""
        unknown = set(moved) - set(_core.batch_arrays)
        if unknown:
            raise KeyError(f"no batch arrays {sorted(unknown)}: the core declares {', '.join(_core.batch_arrays)}")
        addresses = {name: t.data_ptr() for name, t in self.arrays.items() if t.numel()}
        view = self.emulator.batch_view({**addresses, **moved}, LANES, batch_index)
        return torch.from_numpy(np.frombuffer(view, dtype=np.uint8).copy()).to(self.device)

    def prepare_start(self, seeds: np.ndarray | None) -> None:
        """Before a forced reset with seeds: reset_mode "cache"'s start states, recorded on the host for the
        first seed and copied over."""
        if self.start_cache and seeds is not None and len(seeds) and seeds[0] >= 0:
            self.emulator.prepare_start_cache(int(seeds[0]))
            self.upload([ARRAY.cache_machines, ARRAY.cache_envs, ARRAY.cache_screens, ARRAY.cache_frames])

    def device_ids(self, ids: np.ndarray) -> torch.Tensor:
        """`ids` on the device; batches repeat, so each is copied there once."""
        key = ids.tobytes()
        if key not in self._ids:
            self._ids[key] = torch.from_numpy(ids.copy()).to(self.device)
        return self._ids[key]

    def actions(self, actions, batch_size: int) -> torch.Tensor:
        if not isinstance(actions, torch.Tensor):
            actions = torch.as_tensor(np.asarray(actions))
        if self.continuous_threshold is not None:
            return self._continuous_words(actions, batch_size)
        check_action_batch(actions, batch_size)
        # int64 first: torch's unsigned types lack the comparisons below (a uint64 above 2**63 reads as negative:
        # outside the set either way)
        # actions on the host of a GPU batch are checked now, at no cost to the device; on the launch shim the
        # batch's device is the host, so its actions count as already on the device, as a GPU's would
        on_host = actions.device.type == "cpu" and self.device.type != "cpu"
        actions = actions.view(torch.int64) if actions.dtype == torch.uint64 else actions.to(torch.int64)
        if on_host and actions.numel():
            low, high = int(actions.min()), int(actions.max())
            if low < 0 or high >= len(self._action_set):
                raise ValueError(f"action {low if low < 0 else high} is outside the action set "
                                 f"(valid: 0..{len(self._action_set) - 1})")
        actions = actions.to(self.device, non_blocking=True)
        bad = (actions < 0) | (actions >= len(self._action_set))
        self._bad_action = self._bad_action | bad.any()
        return self._action_set[torch.where(bad, torch.zeros_like(actions), actions).long()]

    def _continuous_words(self, actions: torch.Tensor, batch_size: int) -> torch.Tensor:
        """Continuous actions as action words: on the host of a GPU batch with numpy's arithmetic, checked at once
        (as the CPU backend); on the device with torch's, bad ones played as NOOP and reported later."""
        continuous.check_batch(actions, batch_size)
        if actions.device.type == "cpu" and self.device.type != "cpu":
            words = continuous.host_words(actions.detach().numpy(), self.continuous_threshold, batch_size)
            return torch.from_numpy(words).to(self.device, non_blocking=True)
        words, bad = continuous.device_words(actions.detach().to(self.device), self.continuous_threshold,
                                             self._joystick)
        self._bad_action = self._bad_action | bad
        return words

    def check_deferred(self) -> None:
        if bool(self._bad_action):
            self._bad_action.zero_()
            what = ("a continuous action that was not finite or had a radius above "
                    f"{continuous.MAX_RADIUS:g}" if self.continuous_threshold is not None else
                    f"an action outside the action set (valid: 0..{len(self._action_set) - 1})")
            raise ValueError(f"{what} was sent since the last reset; it was played as NOOP")

    def run(self, ids, actions, seeds, force_reset):
        """State update, render pass and resets of the environments `ids`, queued on torch's current stream."""
        if force_reset:
            self.prepare_start(seeds)
        if actions is None:
            actions = torch.zeros(len(ids), dtype=torch.int32, device=self.device)
        seeds = None if seeds is None else torch.from_numpy(seeds).to(self.device)
        launch_step(self.launcher, self.view.data_ptr(), self.device_ids(ids), actions, seeds, force_reset,
                    self.arrays[ARRAY.reset_count])
        return None

    @property
    def reset_count(self) -> torch.Tensor:
        """[1] int32: how many environments the last step left to cule_reset."""
        return self.arrays[ARRAY.reset_count].view(torch.int32)

    def gather(self, ids, same_step):
        device_ids = self.device_ids(ids)
        obs, outputs, final_obs = launch_gather(self.launcher, self.view.data_ptr(), device_ids, self.obs_shape,
                                                same_step, self.device)
        return StepResult(obs, *outputs, device_ids.clone(), final_obs)

    def _sync_host(self, *names: str) -> None:
        """Copies arrays back into the host emulator, whose raw accessors then read them (synchronises)."""
        host = self.emulator.arrays()
        for name in names:
            host[name][:] = self.host_array(name)

    def screens(self):
        self._sync_host(ARRAY.machines, ARRAY.buffers)  # the consoles say which of the two buffers is the last frame
        return torch.from_numpy(self.emulator.observe()[0]).to(self.device)

    def last_output(self, name):
        return result_column(self.arrays[ARRAY.results], name)  # on the device: no copy to the host

    def ram(self):
        self._sync_host(ARRAY.machines)
        rows = self.emulator.ram_rows(np.arange(self.emulator.num_envs, dtype=np.int32))
        return torch.from_numpy(rows).to(self.device)

    # Environment states (cule/cpp/vector/state_rows.hpp): one block per environment, its threads striding over the row.
    STATE_THREADS = 256

    def save_states(self, ids, rows, offset, with_rng):
        digests = torch.zeros(len(ids), dtype=torch.int64, device=self.device)
        self._state_rows(ids, rows, offset, with_rng, save=True, digests=digests)
        return digests

    def load_states(self, ids, rows, offset, with_rng):
        self._state_rows(ids, rows.to(self.device).contiguous(), offset, with_rng, save=False)

    def check_states(self, ids, rows, offset, with_rng, digests):
        """Two launches (the digests, then a thread per row for the fields) and one copy of the faults to the
        host."""
        rows = rows.to(self.device).contiguous()
        n = rows.shape[0]
        faults = torch.zeros(n, dtype=torch.int32, device=self.device)
        if n == 0:
            return faults.cpu().numpy()
        sums = expected = None
        if digests is not None:
            sums = torch.zeros(n, dtype=torch.int64, device=self.device)
            expected = digests.to(self.device).contiguous()
            self.launcher.launch("cule_row_digests", Geometry(n, self.STATE_THREADS, 0, WARP), rows=rows, count=n,
                                 row_bytes=rows.shape[1], offset=offset,
                                 payload_bytes=self.emulator.state_bytes(with_rng), sums=sums)
        self.launcher.launch("cule_check_rows", whole_warps(n), batch=self.view, rows=rows, count=n,
                             row_bytes=rows.shape[1], offset=offset, with_rng=int(with_rng), sums=sums,
                             expected=expected, faults=faults)
        return faults.cpu().numpy()

    def copy_states(self, src, dst, with_rng):
        """One launch for all pairs."""
        src, dst = self.device_ids(src), self.device_ids(dst)
        self._per_env("cule_copy_state", src.numel(), src=src, dst=dst, count=src.numel(), with_rng=int(with_rng))

    def _state_rows(self, ids: np.ndarray, rows: torch.Tensor, offset: int, with_rng: bool, save: bool,
                    digests: torch.Tensor | None = None) -> None:
        ids = self.device_ids(ids)
        self._per_env("cule_state_rows", ids.numel(), ids=ids, count=ids.numel(), rows=rows, row_bytes=rows.shape[1],
                      offset=offset, with_rng=int(with_rng), save=int(save), digests=digests)

    def _per_env(self, kernel: str, n: int, **args) -> None:
        """kernel<<<n, STATE_THREADS>>>(batch=this batch's view, args...): a block per environment; nothing for
        n == 0."""
        if n:
            self.launcher.launch(kernel, Geometry(n, self.STATE_THREADS, 0, WARP), batch=self.view, **args)

    def render_stats(self) -> dict[str, int]:
        """Steps drawn by the render pass and by the state update (log overflow, gymnasium steps), summed over
        environments, and the most TIA accesses one recorded step used. Synchronises: for tests and benchmarks."""
        logs = np.frombuffer(self.host_array(ARRAY.render_logs).tobytes(), dtype=_core.render_log_dtype)
        return {"replayed_steps": int(logs["replayed_steps"].sum()), "inline_steps": int(logs["inline_steps"].sum()),
                "peak_accesses": int(logs["peak_accesses"].max(initial=0))}

    def host_array(self, name: str) -> np.ndarray:
        """A device array's bytes on the host, a lane array's one struct after another as on the host
        (debugging and raw access only: it synchronises)."""
        data = self.arrays[name].cpu().numpy()
        item = self._lane_items.get(name)
        return data if item is None else _core.from_lanes(data, item, LANES, self.emulator.num_envs)


class CudaGroup:
    """Batches of one mapper stepped together: a mixed batch's games that share a mapper run one launch of
    each step kernel, not one per game.

    Each part keeps its arrays and its own BatchView (for saved states and
    raw reads); the group holds the parts' BatchViews side by side on the
    device, numbered in the order of `parts`, with one reset list for all,
    and names an environment by reference (part index, index in its part:
    cule/cpp/vector/vector.hpp env_ref). The parts share one launcher, since
    one build serves every game of a mapper.
    """

    def __init__(self, parts: list[CudaBackend]):
        if not parts or len({p.emulator.cart for p in parts}) != 1:
            raise ValueError("a group holds batches of one mapper")
        if len(parts) > _core.max_ref_batches:
            raise ValueError(f"at most {_core.max_ref_batches} games of one mapper step together")
        self.parts = parts
        self.device = parts[0].device
        self.launcher = parts[0].launcher
        total = sum(p.emulator.num_envs for p in parts)
        self.reset_list = torch.zeros(total, dtype=torch.int32, device=self.device)
        self.reset_count = torch.zeros(1, dtype=torch.int32, device=self.device)
        self._versions: tuple[int, ...] | None = None
        self._views: torch.Tensor | None = None
        self._refs: dict[bytes, torch.Tensor] = {}

    def views(self) -> int:
        """The device address of the parts' BatchViews, rebuilt after a part's arrays moved (upload)."""
        versions = tuple(p.version for p in self.parts)
        if versions != self._versions:
            shared = {ARRAY.reset_list: self.reset_list.data_ptr(), ARRAY.reset_count: self.reset_count.data_ptr()}
            self._views = torch.cat([p.batch_view(k, **shared) for k, p in enumerate(self.parts)])
            self._versions = versions
        return self._views.data_ptr()

    def refs(self, members: list[tuple[int, np.ndarray]]) -> torch.Tensor:
        """References of (part index, ids in that part) pairs, in their order, on the device (each list copied
        there once)."""
        refs = np.concatenate([(k << _core.ref_env_bits) | ids.astype(np.int32) for k, ids in members])
        key = refs.tobytes()
        if key not in self._refs:
            self._refs[key] = torch.from_numpy(refs.astype(np.int32)).to(self.device)
        return self._refs[key]

    def run(self, members: list[tuple[int, np.ndarray]], actions: torch.Tensor | None, seeds: np.ndarray | None,
            force_reset: bool) -> None:
        """Steps (or resets) the members' environments; actions and seeds in the members' order."""
        refs = self.refs(members)
        if force_reset and seeds is not None:
            start = 0
            for k, ids in members:
                self.parts[k].prepare_start(seeds[start:start + len(ids)])
                start += len(ids)
        if actions is None:
            actions = torch.zeros(refs.numel(), dtype=torch.int32, device=self.device)
        seeds_on = None if seeds is None else torch.from_numpy(seeds).to(self.device)
        launch_step(self.launcher, self.views(), refs, actions, seeds_on, force_reset, self.reset_count)

    def gather(self, members: list[tuple[int, np.ndarray]], obs_shape: tuple[int, ...], same_step: bool):
        """(obs, step outputs, final_obs or None) of the members' environments, in their order."""
        return launch_gather(self.launcher, self.views(), self.refs(members), obs_shape, same_step, self.device)
