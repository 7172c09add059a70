"""JAX: an env's outputs as JAX arrays without a copy (DLPack), and a step that jitted JAX code calls (XLA FFI).

Outside jit, wrap an env:

    env = cule.jax.wrap(cule.AtariVectorEnv("pong", 64, device="cuda"))
    obs, info = env.reset(seed=0)              # jax.Array on the GPU, the memory the emulator wrote
    obs, rewards, terminated, truncated, info = env.step(actions)   # actions: a jax.Array

Each output is a fresh buffer the env writes once (``Backend.gather``), so
JAX's immutable arrays can take it over: nothing writes it afterwards. On a
GPU the arrays stay on the device; the env's work is queued on torch's
current stream, which JAX does not wait for: ``wrap`` synchronises that
stream before handing arrays over (one wait per step, no copy).

Inside jit, ``make`` gives pure functions over a state array that XLA calls
through FFI handlers of the extension (cule/cpp/host/bind_xla.cpp), on XLA's
own buffers:

    env = cule.jax.make("pong", 8)
    state, obs, info = env.reset(jax.random.key(0))        # or an int seed: environment i gets seed + i
    def body(state, actions):
        state, obs, rewards, terminated, truncated, info = env.step(state, actions)
        return state, rewards
    state, rewards = jax.lax.scan(body, state, actions)      # actions [T, 8]

What is not functional: the emulators' state lives in the extension, not
in JAX arrays. ``state`` (int32[2]: the emulator's handle and a call count)
stands for it; every call takes it and returns the next one, so the data
dependence orders the calls, and each call is marked as having a side
effect, so XLA neither drops nor merges any. Use each state once, in order:
replaying an old state does not rewind the emulators (use the env's
clone_state/restore_state for that). Autoreset is NextStep; actions outside
the action set play as NOOP (with ``continuous=True``, actions that are not
finite or whose radius is above 65,536).

``make(game, n, device="cuda")`` runs the CUDA backend's kernels on XLA's
own stream: a launch plan, recorded once from the backend's launches, is
replayed by the extension's handler through the CUDA driver, with the
actions read from and the observations and outputs written into XLA's
buffers: no host round trip, no copy. (On a CPU the same plan runs on the
launch shim with ``_shim=True``, which the tests use.)

Needs ``pip install "cule[jax]"`` (a CPU jax; for CUDA, JAX's own CUDA build).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch

try:
    import jax
    import jax.dlpack
    import jax.numpy as jnp
except ImportError as error:  # pragma: no cover - exercised only without jax
    raise ImportError("cule.jax needs JAX: pip install 'cule[jax]' (or JAX's CUDA build for GPUs)") from error


def to_jax(tree: Any) -> Any:
    """Torch tensors (in tuples, lists and dicts, as an env returns them) as JAX arrays sharing their memory,
    on the matching device (CPU, or the same CUDA GPU)."""
    if isinstance(tree, torch.Tensor):
        if tree.is_cuda:
            torch.cuda.current_stream(tree.device).synchronize()
        return jax.dlpack.from_dlpack(tree.contiguous())
    if isinstance(tree, dict):
        return {k: to_jax(v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(to_jax(v) for v in tree)
    return tree


def from_jax(array) -> torch.Tensor:
    """A JAX array as a torch tensor sharing its memory (read it, do not write it: JAX assumes it never
    changes)."""
    return torch.from_dlpack(array)


class JaxEnv:
    """An AtariVectorEnv whose reset and step take and return JAX arrays, zero-copy (see the module's text).
    Everything else (spaces, states, raw reads as torch tensors) is the wrapped env's: ``env.env``."""

    def __init__(self, env):
        self.env = env

    def reset(self, **kwargs):
        return to_jax(self.env.reset(**kwargs))

    def step(self, actions):
        return to_jax(self.env.step(from_jax(actions) if isinstance(actions, jax.Array) else actions))

    def __getattr__(self, name):
        return getattr(self.env, name)


def wrap(env) -> JaxEnv:
    """``env`` (cule.AtariVectorEnv) speaking JAX: reset/step take and return jax arrays without copies."""
    return JaxEnv(env)


@functools.lru_cache(maxsize=None)
def _register_handlers(platform: str = "cpu") -> None:
    from . import _core
    if platform == "cpu":
        for name, capsule in _core.xla_handlers().items():
            jax.ffi.register_ffi_target(name, capsule, platform="cpu")
    jax.ffi.register_ffi_target("cule_plan_call", _core.xla_plan_handlers()[platform], platform=platform)


class _Slot:
    """A launch argument that a plan's call fills in: the address of the call's buffer `index` (its arguments,
    then its results)."""

    def __init__(self, index: int):
        self.index = index


class _PlanRecorder:
    """Stands in for a CUDA backend's launcher (backends/cuda.py): records the launches it is asked for as a
    launch plan's ops, for the extension's XLA handler (cule/cpp/host/bind_xla_plan.cpp) to replay."""

    def __init__(self, launcher):
        self.launcher = launcher
        self.sms = launcher.sms
        self.ops: list[tuple] = []

    def zero(self, tensor: torch.Tensor) -> None:
        self.ops.append(("zero", tensor.data_ptr(), tensor.numel() * tensor.element_size()))

    def launch(self, kernel: str, geometry, **args) -> None:
        from .backends.cuda import _KIND_CODES, SIGNATURES, kernel_arguments

        slots = {name: v.index for name, v in args.items() if isinstance(v, _Slot)}
        values = kernel_arguments(kernel, {k: 0 if isinstance(v, _Slot) else v for k, v in args.items()})
        function = self.launcher.function(kernel) if hasattr(self.launcher, "function") else 0
        self.ops.append((kernel, function, geometry.grid, geometry.block, geometry.shared_bytes,
                         [v & (2**64 - 1) for v, _ in values], [_KIND_CODES[kind] for _, kind in values],
                         [slots.get(name, -1) for name, _, _ in SIGNATURES[kernel]]))


def _launch_plans(env, keep: list) -> tuple[int, int]:
    """(step, reset) plan handles of a one-game env on the CUDA backend (a GPU or the shim). Buffers of a call:
    arguments state int32[2] and actions int32[N] (a reset: seeds as int64[N]); results state, obs, then the
    step outputs. `keep` receives the tensors the plans point at."""
    from . import _core
    from .backends.cuda import launch_gather_into, launch_step

    backend = env.backend
    n = env.num_envs
    refs = backend.device_ids(np.arange(n, dtype=np.int32))
    noops = torch.zeros(n, dtype=torch.int32, device=backend.device)
    keep += [refs, noops]
    obs_bytes = n * int(np.prod(env.single_observation_space.shape))
    rets = [8, obs_bytes] + [n * np.dtype(d).itemsize for d in _core.step_outputs.values()]
    outputs = {name: _Slot(4 + i) for i, name in enumerate(_core.step_outputs)}
    handles = []
    for reset in (False, True):
        rec = _PlanRecorder(backend.launcher)
        launch_step(rec, backend.view.data_ptr(), refs, noops if reset else _Slot(1), _Slot(1) if reset else None,
                    reset, backend.reset_count)
        launch_gather_into(rec, backend.view.data_ptr(), refs, _Slot(3), outputs, None)
        handles.append(_core.xla_register_plan(backend.device.type == "cuda", env.blocks[0].emulator.cart,
                                               rec.ops, [8, n * (8 if reset else 4)], rets))
    return handles[0], handles[1]


def continuous_words(actions, threshold: float):
    """cule.continuous's action words in JAX: float [N, 3] (radius, theta, fire) -> int32 [N], a bad action
    (not finite, or a radius above MAX_RADIUS) as NOOP. ALE's paddle step, (int)(23000 * |radius|) in double,
    is computed exactly in 32-bit integers from the radius's bits, since JAX leaves float64 off by default."""
    from . import continuous
    a = actions.astype(jnp.float32)
    if a.ndim != 2 or a.shape[1] != 3:
        raise ValueError(f"expected continuous actions of shape (num_envs, 3), got shape {a.shape}")
    radius = jnp.abs(a[:, 0])
    ids = jnp.asarray(continuous.JOYSTICK.ravel())[continuous.joystick_cells(jnp, a, threshold)]
    # |radius| = m * 2^-s: 23000 m < 2^39, so with m = high * 2^16 + low the step is
    # (23000 high + (23000 low >> 16)) >> (s - 16), every term below 2^32; s >= 16 wherever the step is under
    # the cap (a radius below 2^8)
    bits = jax.lax.bitcast_convert_type(radius, jnp.uint32)
    exponent = (bits >> 23).astype(jnp.int32)
    m = jnp.where(exponent > 0, (bits & 0x7FFFFF) | 0x800000, bits & 0x7FFFFF)
    shift = 150 - jnp.maximum(exponent, 1) - 16
    delta = jnp.uint32(int(continuous.PADDLE_DELTA))
    total = delta * (m >> 16) + ((delta * (m & 0xFFFF)) >> 16)
    small = total >> jnp.clip(shift, 0, 31).astype(jnp.uint32)
    step = jnp.where(shift >= 32, 0, jnp.where(radius >= 256.0, continuous.MAX_STEP,
                                                jnp.minimum(small, continuous.MAX_STEP).astype(jnp.int32)))
    words = ids | ((step.astype(jnp.int32) + 1) << continuous.ID_BITS)
    bad = ~jnp.isfinite(a).all(axis=1) | (radius > continuous.MAX_RADIUS)
    return jnp.where(bad, 0, words).astype(jnp.int32)


class JitEnv:
    """Pure reset/step functions over a batch of `num_envs` environments of one game, for jax.jit and lax.scan
    (see the module's text). `kwargs` are AtariVectorEnv's (NextStep autoreset only); ``device="cuda"`` runs
    the CUDA kernels on XLA's stream, which the jitted program must then run on (JAX's default GPU).

    ``reset(key_or_seed)`` -> (state, obs, info); ``step(state, actions)`` -> (state, obs, rewards, terminated,
    truncated, info), with the dtypes and shapes of AtariVectorEnv's outputs; info holds lives, frame_number
    and episode_frame_number. ``env.env`` is the AtariVectorEnv underneath (spaces, action set, raw reads).
    """

    def __init__(self, game: str, num_envs: int, **kwargs):
        from . import _core
        from .vector_env import AtariVectorEnv

        if isinstance(game, (list, tuple, dict)):
            raise ValueError("cule.jax.make takes one game; a mixed batch is available through wrap()")
        if kwargs.get("batch_size", 0) not in (0, num_envs):
            raise ValueError("cule.jax.make runs every environment at once: leave batch_size out")
        if str(kwargs.get("autoreset_mode", "NextStep")).lower().replace("_", "") not in (
                "nextstep", "autoresetmode.nextstep"):
            raise ValueError("cule.jax.make supports NextStep autoreset only")
        device = torch.device(kwargs.get("device", "cpu"))
        self.planned = device.type == "cuda" or bool(kwargs.get("_shim"))  # the CUDA backend's kernels
        if self.planned and kwargs.get("reset_mode", "ale") != "ale":
            raise ValueError("cule.jax.make on the CUDA backend supports reset_mode='ale' only (the start cache "
                             "is built on the host)")
        _register_handlers()
        if device.type == "cuda":
            _register_handlers("CUDA")
        self.env = AtariVectorEnv(game, num_envs, **kwargs)
        self.num_envs = self.env.num_envs
        self.action_set = np.asarray(self.env.action_set, dtype=np.int32)
        # the threshold of continuous actions, None for indices (kept here: close() drops the env)
        self.threshold = self.env.continuous_action_threshold if self.env.continuous else None
        self.output_names = list(_core.step_outputs)
        shapes = [jax.ShapeDtypeStruct((2,), jnp.int32),
                  jax.ShapeDtypeStruct((self.num_envs, *self.env.single_observation_space.shape), jnp.uint8)]
        shapes += [jax.ShapeDtypeStruct((self.num_envs,), np.dtype(d)) for d in _core.step_outputs.values()]
        self._plans, self._keep = (), []
        if self.planned:
            self._plans = _launch_plans(self.env, self._keep)
            if device.type == "cuda":  # the env's set-up ran on torch's stream; XLA's does not wait for it
                torch.cuda.synchronize(device)
            self.handle = self._plans[0]
            call = jax.ffi.ffi_call("cule_plan_call", shapes, has_side_effect=True)
            self._step = lambda state, a: call(state, a, plan=np.int32(self._plans[0]))
            self._reset = lambda state, seeds: call(state, _as_int64_words(seeds), plan=np.int32(self._plans[1]))
        else:
            self.handle = _core.xla_register(self.env.blocks[0].emulator, self.env.num_threads)
            self._step = jax.ffi.ffi_call("cule_step", shapes, has_side_effect=True)
            self._reset = jax.ffi.ffi_call("cule_reset", shapes, has_side_effect=True)

    def reset(self, key_or_seed):
        """Resets every environment: a PRNG key draws one seed per environment, an int seeds environment i with
        seed + i (as AtariVectorEnv.reset(seed=...))."""
        if isinstance(key_or_seed, (bool, np.bool_, float, str, bytes)) or (
                getattr(key_or_seed, "ndim", None) == 0 and not jnp.issubdtype(key_or_seed.dtype, jnp.integer)
                and not jnp.issubdtype(key_or_seed.dtype, jax.dtypes.prng_key)):
            raise TypeError(f"reset takes an int seed or a PRNG key, got {key_or_seed!r}")
        if getattr(key_or_seed, "ndim", None) == 0 and jnp.issubdtype(key_or_seed.dtype, jnp.integer):
            key_or_seed = int(key_or_seed)  # a 0-d integer array (numpy or a concrete jax one) is a seed
        if isinstance(key_or_seed, (int, np.integer)):
            # checked here: a seed below 0 (or one that wraps past int32) would leave a console off, and its reset
            # would never end
            from .checks import given_seeds
            seeds = jnp.asarray(given_seeds(key_or_seed, self.num_envs).astype(np.int32))
        else:
            seeds = jax.random.randint(key_or_seed, (self.num_envs,), 0, 2**31 - 1, dtype=jnp.int32)
        state, obs, *outputs = _fenced(self._reset(jnp.array([self.handle, 0], dtype=jnp.int32), seeds))
        return self._next(state), obs, self._info(outputs)

    def step(self, state, actions):
        """One step of every environment with `actions` (int, [num_envs], indices into the action set; with
        continuous=True float [num_envs, 3], cule.continuous)."""
        actions = jnp.asarray(actions)
        if self.threshold is not None:
            ale = continuous_words(actions, self.threshold)
        else:
            inside = (actions >= 0) & (actions < len(self.action_set))  # take() alone wraps a negative index
            ale = jnp.where(inside, jnp.take(jnp.asarray(self.action_set), actions, mode="fill", fill_value=0), 0)
        state, obs, *outputs = _fenced(self._step(state, ale.astype(jnp.int32)))
        named = dict(zip(self.output_names, outputs))
        return (self._next(state), obs, named["rewards"], named["terminated"], named["truncated"],
                self._info(outputs))

    def _next(self, state):
        # the CPU handler counts the call itself; a plan's handler passes the state on unchanged
        return state.at[1].add(1) if self.planned else state

    def _info(self, outputs) -> dict:
        from .backends import INFO_OUTPUTS
        return {k: v for k, v in zip(self.output_names, outputs) if k in INFO_OUTPUTS}

    def close(self) -> None:
        from . import _core
        if self.env is not None:
            if self.planned:
                for handle in self._plans:
                    _core.xla_release_plan(handle)
            else:
                _core.xla_release(self.handle)
            self.env.close()
            self.env = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _fenced(results):
    """A call's results behind an optimization barrier. XLA's GPU dynamic-slice fusion may take a call whose
    results feed a scan's stacked outputs into a fusion; when another result (the state) has users outside
    it, the original call stays as well and the step runs twice. The barrier keeps results out of the match."""
    return jax.lax.optimization_barrier(tuple(results))


def _as_int64_words(seeds):
    """int32 seeds [N] as int32 [N, 2], the little-endian words of the int64 seeds the kernels read (without
    JAX's 64-bit mode); a negative seed (keep the environment's) stays negative."""
    return jnp.stack([seeds, jnp.where(seeds < 0, -1, 0).astype(jnp.int32)], axis=-1)


def make(game: str, num_envs: int, **kwargs) -> JitEnv:
    """Pure, jittable reset and step over `num_envs` environments of `game` (AtariVectorEnv's `kwargs`)."""
    return JitEnv(game, num_envs, **kwargs)
