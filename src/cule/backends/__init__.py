"""Backends that run the emulator core behind one interface: ``cpu`` (the
pybind11 extension's threads) and ``cuda`` (NVRTC kernels, or the same launch
code on the host launch shim).

``AtariVectorEnv`` validates arguments, draws seeds and splits the batch; a
backend holds the environments' state and does the rest. Environment ids
(``ids``) are int32 numpy arrays of indices into the batch; every tensor a
backend returns lives on its ``device``.

The contract every backend keeps (``tests/test_backend_contract.py`` runs it
over the CPU backend, the launch shim and, on a GPU, CUDA):

- **Results**: ``gather`` returns fresh tensors. In SameStep mode
  ``final_obs`` is there on every step, the rows of environments whose
  episode did not end holding zeros; otherwise it is None.
- **Bad actions**: actions given on the host (numpy, or a CPU tensor) are
  checked at once, on either backend: a ValueError, and nothing steps.
  Actions already on a GPU are checked there, without waiting for the
  device: one outside the action set (or a continuous action that is not
  finite) is played as NOOP and reported by ``check_deferred`` at the next
  reset, a call that synchronises anyway.
- **Raw reads** (``screens``, ``last_output``, ``ram``) synchronise and copy
  no more than they return: ``last_output`` is the last step's (or reset's),
  as the step's ``info`` gave it.
- **Resets** run ALE's reset sequence, or (``start_cache``) start from a
  state recorded at the last seeded reset, the same on every backend: one
  builder records the start states (``Emulator.prepare_start_cache``, on the
  host, within the reset on the CPU, before it on CUDA, which then uploads
  them), and the reset kernel or thread picks among them with the same RNG.
"""
from __future__ import annotations

import abc
import concurrent.futures
import os
import weakref
from dataclasses import dataclass, make_dataclass
from typing import Any

import numpy as np
import torch

from .. import _core


# One batch's outputs, B environments in the order of their ids: obs [B, *obs_shape] uint8; one tensor [B] per
# name in cule._core.step_outputs (rewards int32, terminated and truncated bool, lives, frame_number and
# episode_frame_number int32), declared once in cule/cpp/vector/vector.hpp (CULE_STEP_OUTPUTS); env_id [B] int32;
# final_obs [B, *obs_shape] uint8 in SameStep mode (the last observation of the episodes that ended, zeros for
# the others), else None.
StepResult = make_dataclass("StepResult", ["obs", *_core.step_outputs, "env_id", "final_obs"])
# The step outputs that are not gymnasium's (obs, rewards, terminated, truncated): they go to info.
INFO_OUTPUTS = tuple(name for name in _core.step_outputs if name not in ("rewards", "terminated", "truncated"))


class BackgroundStep:
    """The one Python thread that steps an asynchronous CPU batch while the caller goes on (``executor``, None
    when steps run in the caller).

    A fork's child inherits the executor but not its thread. Before a fork, the parent waits for the steps in
    flight (they would never finish in the child, whose recv() would wait forever); ``forked()`` tells the child,
    and gives it a thread of its own."""

    def __init__(self, background: bool):
        self._pid = os.getpid()
        self.executor = concurrent.futures.ThreadPoolExecutor(1) if background else None
        self._last: concurrent.futures.Future | None = None
        if background:
            _BACKGROUND.add(self)

    def submit(self, fn, *args) -> concurrent.futures.Future:
        self._last = self.executor.submit(fn, *args)  # one thread: the last to finish is the last submitted
        return self._last

    def forked(self) -> bool:
        if self._pid == os.getpid():
            return False
        self._pid = os.getpid()
        if self.executor is not None:  # the parent's is left alone: its thread is not in this process
            self.executor = concurrent.futures.ThreadPoolExecutor(1)
        return True

    def close(self) -> None:
        if self.executor is not None and self._pid == os.getpid():
            self.executor.shutdown()


_BACKGROUND: weakref.WeakSet[BackgroundStep] = weakref.WeakSet()


def _finish_steps_before_fork() -> None:
    for background in list(_BACKGROUND):
        if background._last is not None and background._pid == os.getpid():
            concurrent.futures.wait([background._last])


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_finish_steps_before_fork)


class Backend(abc.ABC):
    """What ``AtariVectorEnv`` asks of the machinery that steps its environments.

    ``emulator`` is the host batch (``cule._core.Emulator``) every backend is
    built from: it fixes the options, layouts and start states.
    """

    device: torch.device
    emulator: Any

    @abc.abstractmethod
    def actions(self, actions, batch_size: int):
        """Action indices (int, [batch_size], torch or numpy), or continuous actions (float, [batch_size, 3],
        with ``continuous_threshold`` set; cule.continuous), as the action words run() takes (ALE action ids, with
        the paddle step of continuous actions above them); raises TypeError or ValueError on a bad batch (see
        check_action_batch and cule.continuous.check_batch)."""

    @abc.abstractmethod
    def run(self, ids: np.ndarray, actions, seeds: np.ndarray | None, force_reset: bool):
        """Steps environments `ids` with `actions` from actions(), or resets them (force_reset; seeds int64 [B],
        -1: keep the console and RNG). Returns a future whose result() waits for a step left running in the
        background, or None when the results can be gathered at once."""

    @abc.abstractmethod
    def gather(self, ids: np.ndarray, same_step: bool) -> StepResult:
        """The outputs of environments `ids`, fresh tensors the caller may keep or modify."""

    @abc.abstractmethod
    def screens(self) -> torch.Tensor:
        """Palette indices, uint8 [N, H, 160], of every environment's last frame."""

    @abc.abstractmethod
    def last_output(self, name: str) -> torch.Tensor:
        """Output `name` (cule._core.step_outputs: lives, frame counters, terminated, ...) of every environment,
        [N] of its dtype, as the last step or reset (or a restored state) reported it."""

    @abc.abstractmethod
    def ram(self) -> torch.Tensor:
        """RIOT RAM, uint8 [N, 128]."""

    @abc.abstractmethod
    def save_states(self, ids: np.ndarray, rows: torch.Tensor, offset: int, with_rng: bool) -> torch.Tensor:
        """Environment ids[i]'s state into rows[i, offset:] (rows uint8 [B, row_bytes] on device); returns each
        row's digest (int64 [B], the bits of cule/cpp/vector/state_rows.hpp's uint64 row_digest)."""

    @abc.abstractmethod
    def check_states(self, ids: np.ndarray, rows: torch.Tensor, offset: int, with_rng: bool,
                     digests: torch.Tensor | None) -> np.ndarray:
        """Each row's first fault (int32 [B], 0: it may be loaded; else 1 + an index into cule._core.state_faults),
        row i being meant for environment ids[i]:
        the payload's fields that index memory or bound loops (cule/cpp/vector/state_check.hpp) and, given
        `digests` (int64 [B]), the payload's digest. Reads the rows only (rows on the backend's device);
        synchronises."""

    @abc.abstractmethod
    def load_states(self, ids: np.ndarray, rows: torch.Tensor, offset: int, with_rng: bool) -> None:
        """The reverse of save_states, loading the rows as they are (check_states them first); rows may be on any
        device."""

    @abc.abstractmethod
    def copy_states(self, src: np.ndarray, dst: np.ndarray, with_rng: bool) -> None:
        """Environment src[i]'s state onto dst[i] (no environment both a source and a destination)."""

    def check_deferred(self) -> None:
        """Raises what a step found wrong but could not report without waiting (an action out of range on a
        device). Called at reset."""

    def close(self) -> None:
        """Waits for steps still running and frees what the backend holds."""


def result_column(results, name: str):
    """Output `name` (cule._core.step_outputs) of every environment's last results, from the bytes of a batch's
    results array (numpy, or a torch tensor, which stays on its device): [N] of the output's dtype."""
    offset, size = _core.result_fields[name]
    dtype = _core.step_outputs[name]
    if isinstance(results, torch.Tensor):
        rows = results.view(-1, _core.result_bytes)[:, offset:offset + size].contiguous()
        return rows.view(torch_dtype(dtype)).flatten()
    return np.ascontiguousarray(results.reshape(-1, _core.result_bytes)[:, offset:offset + size]).view(dtype).ravel()


def torch_dtype(dtype) -> torch.dtype:
    """The torch element type of a numpy one (any that torch has)."""
    return torch.from_numpy(np.empty(0, dtype=dtype)).dtype


def index_tensor(positions: np.ndarray, device: torch.device) -> torch.Tensor:
    """Batch positions (numpy ints) as an index tensor on `device`."""
    return torch.from_numpy(np.asarray(positions)).to(device, dtype=torch.long)


def check_action_batch(actions, batch_size: int) -> None:
    """The checks every backend makes of a batch of actions (numpy array or torch tensor) before looking at
    their values."""
    if isinstance(actions, torch.Tensor):
        integer = not (actions.dtype.is_floating_point or actions.dtype.is_complex or actions.dtype == torch.bool)
    else:
        integer = np.issubdtype(actions.dtype, np.integer) and actions.dtype != np.bool_
    if not integer:
        raise TypeError(f"actions must be integer indices into the action set, got dtype {actions.dtype}")
    if tuple(actions.shape) != (batch_size,):
        raise ValueError(f"expected {batch_size} actions (one per environment of the batch), "
                         f"got shape {tuple(actions.shape)}")


@dataclass(frozen=True)
class BackendSettings:
    """What a backend needs of its env besides the emulator and the device; the env builds it once."""
    action_set: np.ndarray      # ALE action ids of the action indices, int32
    obs_shape: tuple[int, ...]  # one environment's observation
    frameskip: int
    num_threads: int            # CPU backend: emulation threads (0: all cores)
    background: bool            # CPU backend: step in a background thread (asynchronous batches)
    start_cache: bool           # CUDA backend: reset_mode "cache", start states recorded at seeded resets
    # On "cpu", the CUDA backend's launch code on the host launch shim (tests); an int stands for the SM count
    # its launch geometry assumes; "device": the kernels as the device compiles them (cule.kernels.device_shim).
    shim: bool | int | str = False
    # Continuous actions (cule.continuous) compared with this threshold; None: action indices.
    continuous_threshold: float | None = None


def create(emulator, device: torch.device, settings: BackendSettings) -> Backend:
    """The backend for `device`: CUDA kernels for "cuda" (or, with `settings.shim` on "cpu", the same launch
    code on the host launch shim), else CPU threads."""
    s = settings
    if device.type == "cuda" or s.shim:
        from ..kernels import KernelBuild
        from . import cuda
        if not s.shim or device.type != "cpu":
            launcher = cuda.CudaLauncher(KernelBuild(emulator.cart), device)
        elif isinstance(s.shim, str):
            if s.shim != "device":
                raise ValueError(f"_shim={s.shim!r}: True, an SM count, or 'device' (the device's code)")
            launcher = cuda.ShimLauncher(emulator.cart, device_code=True)
        else:
            launcher = cuda.ShimLauncher(emulator.cart, *([] if s.shim is True else [int(s.shim)]))
        return cuda.CudaBackend(emulator, device, launcher, action_set=s.action_set, obs_shape=s.obs_shape,
                                frameskip=s.frameskip, start_cache=s.start_cache,
                                continuous_threshold=s.continuous_threshold)
    from .cpu import CpuBackend
    return CpuBackend(emulator, action_set=s.action_set, obs_shape=s.obs_shape, num_threads=s.num_threads,
                      background=s.background, continuous_threshold=s.continuous_threshold)
