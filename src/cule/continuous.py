"""Continuous actions (``continuous=True``), as ale-py 0.12.1 takes them.

Each environment's action is three floats, (radius, theta, fire), in the box
[0, 1] x [-pi, pi] x [0, 1]. As in ale-py (``AtariEnv.step``,
``AtariVectorEnv.send``), in float32:

- ``x = radius * cos(theta)``, ``y = radius * sin(theta)``; each axis is -1,
  0 or 1 by whether it lies below ``-threshold``, between, or above
  ``threshold``; fire is ``fire > threshold``. The three pick one of ALE's 18
  joystick actions (``AtariEnv.map_action_idx``).
- ``radius`` is also the paddle strength: a paddle moves by
  ``(int)(23000 * |radius|)`` a frame instead of 23000
  (``ALEState::applyActionPaddles``, computed in double), and a sticky repeat
  keeps the strength with the action.

The result is one int32 action word per environment, the form every backend
carries to the core: the ALE action in its low byte, the paddle step above it
(``cule/cpp/ale/ale.hpp``, ``action_id`` and ``paddle_step``).

On the host the arithmetic is numpy's, the same calls ale-py makes, so the
actions chosen are ale-py's bit for bit. On a GPU it is torch's: its cosine
may differ from numpy's in the last bit, which changes the action only for a
coordinate within one float32 step of the threshold.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from .games import ACTION_NAMES

PADDLE_DELTA = 23000.0  # ALE's PADDLE_DELTA: a full-strength paddle move per frame
ID_BITS = 8             # ale.hpp kActionIdBits
MAX_STEP = 1 << 22      # ale.hpp kMaxPaddleStep: beyond every paddle range, so larger steps move as it does
# Radii beyond this are refused: past it ALE's int arithmetic overflows (above about 93,000), and no paddle
# moves further than it does at 183 (MAX_STEP / 23000).
MAX_RADIUS = 65536.0

# The ALE action of (horizontal + 1, vertical + 1, fire): horizontal -1 left, 1 right; vertical -1 down, 1 up.
_NAMES = {(0, 0): ("NOOP", "FIRE"), (-1, 0): ("LEFT", "LEFTFIRE"), (1, 0): ("RIGHT", "RIGHTFIRE"),
          (0, -1): ("DOWN", "DOWNFIRE"), (0, 1): ("UP", "UPFIRE"), (-1, -1): ("DOWNLEFT", "DOWNLEFTFIRE"),
          (1, -1): ("DOWNRIGHT", "DOWNRIGHTFIRE"), (-1, 1): ("UPLEFT", "UPLEFTFIRE"),
          (1, 1): ("UPRIGHT", "UPRIGHTFIRE")}


def _joystick_table() -> np.ndarray:
    table = np.zeros((3, 3, 2), np.int32)
    for (h, v), names in _NAMES.items():
        for fire, name in enumerate(names):
            table[h + 1, v + 1, fire] = ACTION_NAMES.index(name)
    return table


JOYSTICK = _joystick_table()


def action_space_bounds() -> tuple[np.ndarray, np.ndarray]:
    """ale-py's Box bounds of one environment's continuous action (low, high), float32 [3]."""
    return (np.array([0.0, -np.pi, 0.0], np.float32), np.array([1.0, np.pi, 1.0], np.float32))


def check_threshold(threshold) -> float:
    """The threshold as a Python float: numpy then compares float32 coordinates with it in float32, as in ale-py."""
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(threshold, (int, float, np.integer, np.floating)) \
            or not math.isfinite(threshold):
        raise ValueError(f"continuous_action_threshold must be a finite number, got {threshold!r}")
    return float(threshold)


def check_batch(actions, batch_size: int) -> None:
    """A batch of continuous actions (numpy array or torch tensor) is floating point, [batch_size, 3]."""
    floating = actions.dtype.is_floating_point if isinstance(actions, torch.Tensor) \
        else np.issubdtype(actions.dtype, np.floating)
    if not floating:
        raise TypeError(f"continuous actions must be floats (radius, theta, fire), got dtype {actions.dtype}")
    if tuple(actions.shape) != (batch_size, 3):
        raise ValueError(f"expected continuous actions of shape ({batch_size}, 3): (radius, theta, fire) for each "
                         f"environment of the batch, got shape {tuple(actions.shape)}")


def joystick_cells(xp, a, threshold: float):
    """The entries of JOYSTICK.ravel() that float32 actions [B, 3] choose, in the array library `xp` (numpy,
    torch or jax.numpy, whichever `a` belongs to): each coordinate compared with the threshold in float32."""
    def axis(v):  # -1, 0 or 1, plus one
        return xp.where(v > threshold, 2, xp.where(v < -threshold, 0, 1))

    x, y = a[:, 0] * xp.cos(a[:, 1]), a[:, 0] * xp.sin(a[:, 1])
    return (axis(x) * 3 + axis(y)) * 2 + xp.where(a[:, 2] > threshold, 1, 0)


def host_words(actions: np.ndarray, threshold: float, batch_size: int) -> np.ndarray:
    """Action words (int32 [B]) of continuous actions on the host, computed as ale-py computes them. Raises
    ValueError, before anything steps, for a value that is not finite or a radius beyond MAX_RADIUS."""
    check_batch(actions, batch_size)
    a = np.asarray(actions, np.float32)  # ale-py asks for float32
    finite = np.isfinite(a).all(axis=1)
    if not finite.all():
        env = int(np.argmin(finite))
        raise ValueError(f"continuous action {a[env].tolist()} of environment {env} is not finite")
    radius = np.abs(a[:, 0])
    if radius.max(initial=0.0) > MAX_RADIUS:
        env = int(np.argmax(radius))
        raise ValueError(f"continuous action of environment {env} has radius {a[env, 0]}: at most {MAX_RADIUS:g} "
                         f"(the action space's radius is in [0, 1])")
    step = np.minimum(np.trunc(radius.astype(np.float64) * PADDLE_DELTA), MAX_STEP).astype(np.int32)
    return JOYSTICK.ravel()[joystick_cells(np, a, threshold)] | ((step + 1) << ID_BITS)


def device_words(actions: torch.Tensor, threshold: float, table: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Action words (int32 [B]) of continuous actions on their device, without waiting for it, and whether any
    action was bad (a bool scalar tensor): those play as NOOP. ``table`` is JOYSTICK on the device, flattened."""
    a = actions.to(torch.float32)
    radius = a[:, 0].abs()
    bad = ~torch.isfinite(a).all(dim=1) | (radius > MAX_RADIUS)
    ids = table[joystick_cells(torch, a, threshold)]
    step = torch.clamp(torch.trunc(radius.to(torch.float64) * PADDLE_DELTA), max=MAX_STEP).to(torch.int32)
    words = ids | ((step + 1) << ID_BITS)
    return torch.where(bad, torch.zeros_like(words), words), bad.any()
