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
the action set play as NOOP. ``make`` runs on the CPU backend; on a GPU
use ``wrap`` (the outputs stay on the device).

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
def _register_handlers() -> None:
    from . import _core
    for name, capsule in _core.xla_handlers().items():
        jax.ffi.register_ffi_target(name, capsule, platform="cpu")


class JitEnv:
    """Pure reset/step functions over a batch of `num_envs` environments of one game on the CPU backend, for
    jax.jit and lax.scan (see the module's text). `kwargs` are AtariVectorEnv's (NextStep autoreset only).

    ``reset(key_or_seed)`` -> (state, obs, info); ``step(state, actions)`` -> (state, obs, rewards, terminated,
    truncated, info), with the dtypes and shapes of AtariVectorEnv's outputs; info holds lives, frame_number
    and episode_frame_number. ``env.env`` is the AtariVectorEnv underneath (spaces, action set, raw reads).
    """

    def __init__(self, game: str, num_envs: int, **kwargs):
        from . import _core
        from .vector_env import AtariVectorEnv

        if isinstance(game, (list, tuple, dict)):
            raise ValueError("cule.jax.make takes one game; a mixed batch is available through wrap()")
        if kwargs.get("device", "cpu") != "cpu" or kwargs.get("batch_size", 0) not in (0, num_envs):
            raise ValueError("cule.jax.make runs every environment at once on the CPU backend; for a GPU use "
                             "cule.jax.wrap(AtariVectorEnv(..., device='cuda'))")
        if str(kwargs.get("autoreset_mode", "NextStep")).lower().replace("_", "") not in (
                "nextstep", "autoresetmode.nextstep"):
            raise ValueError("cule.jax.make supports NextStep autoreset only")
        _register_handlers()
        self.env = AtariVectorEnv(game, num_envs, **kwargs)
        self.num_envs = self.env.num_envs
        self.handle = _core.xla_register(self.env.blocks[0].emulator, self.env.num_threads)
        self.action_set = np.asarray(self.env.action_set, dtype=np.int32)
        self.output_names = list(_core.step_outputs)
        shapes = [jax.ShapeDtypeStruct((2,), jnp.int32),
                  jax.ShapeDtypeStruct((self.num_envs, *self.env.single_observation_space.shape), jnp.uint8)]
        shapes += [jax.ShapeDtypeStruct((self.num_envs,), np.dtype(d)) for d in _core.step_outputs.values()]
        self._step = jax.ffi.ffi_call("cule_step", shapes, has_side_effect=True)
        self._reset = jax.ffi.ffi_call("cule_reset", shapes, has_side_effect=True)

    def reset(self, key_or_seed):
        """Resets every environment: a PRNG key draws one seed per environment, an int seeds environment i with
        seed + i (as AtariVectorEnv.reset(seed=...))."""
        if isinstance(key_or_seed, (int, np.integer)):
            seeds = jnp.arange(self.num_envs, dtype=jnp.int32) + jnp.int32(key_or_seed)
        else:
            seeds = jax.random.randint(key_or_seed, (self.num_envs,), 0, 2**31 - 1, dtype=jnp.int32)
        state, obs, *outputs = self._reset(jnp.array([self.handle, 0], dtype=jnp.int32), seeds)
        return state, obs, self._info(outputs)

    def step(self, state, actions):
        """One step of every environment with `actions` (int, [num_envs], indices into the action set)."""
        ale = jnp.take(jnp.asarray(self.action_set), actions, mode="fill", fill_value=0)
        state, obs, *outputs = self._step(state, ale.astype(jnp.int32))
        named = dict(zip(self.output_names, outputs))
        return (state, obs, named["rewards"], named["terminated"], named["truncated"], self._info(outputs))

    def _info(self, outputs) -> dict:
        from .backends import INFO_OUTPUTS
        return {k: v for k, v in zip(self.output_names, outputs) if k in INFO_OUTPUTS}

    def close(self) -> None:
        from . import _core
        if self.env is not None:
            _core.xla_release(self.handle)
            self.env.close()
            self.env = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def make(game: str, num_envs: int, **kwargs) -> JitEnv:
    """Pure, jittable reset and step over `num_envs` environments of `game` (AtariVectorEnv's `kwargs`)."""
    return JitEnv(game, num_envs, **kwargs)
