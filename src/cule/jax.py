"""JAX interop: an env's outputs as JAX arrays and JAX actions into the env, without a copy (DLPack).

    env = cule.jax.wrap(cule.AtariVectorEnv("pong", 64, device="cuda"))
    obs, info = env.reset(seed=0)              # jax.Array on the GPU, the memory the emulator wrote
    obs, rewards, terminated, truncated, info = env.step(actions)   # actions: a jax.Array

Each output is a fresh buffer the env writes once (``Backend.gather``), so
JAX's immutable arrays can take it over: nothing writes it afterwards. On a
GPU the arrays stay on the device; the env's work is queued on torch's
current stream, which JAX does not wait for: ``wrap`` synchronises that
stream before handing arrays over (one wait per step, no copy).

Needs ``pip install "cule[jax]"`` (a CPU jax; for CUDA, JAX's own CUDA build).
"""
from __future__ import annotations

from typing import Any

import torch

try:
    import jax
    import jax.dlpack
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
