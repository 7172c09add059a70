"""An env's saved states: clone, restore and fork rows of cule.state's format over its blocks and backend.

``AtariVectorEnv`` checks that no environment is stepping and turns the
user's ids into an int32 array; this class does the rest. Rows it issued
(``clone``) skip the digest pass when they come back unchanged in identity,
since they never left the process.
"""
from __future__ import annotations

import numpy as np
import torch

from . import state as state_format
from .backends import Backend, index_tensor
from .blocks import GameBlock, blocks_of
from .errors import StateError


class EnvStates:
    """The state methods of a batch of `blocks` stepped by `backend` on `device`. ``loaded[i]``: environment i
    holds a console (a seeded reset or a restore put one there)."""

    def __init__(self, blocks: list[GameBlock], backend: Backend, device: torch.device, num_envs: int):
        self.blocks, self.backend, self.device = blocks, backend, device
        self.loaded = np.zeros(num_envs, dtype=bool)
        self.issued = state_format.IssuedRows()

    def clone(self, ids: np.ndarray, with_rng: bool) -> torch.Tensor:
        """Rows uint8 [len(ids), header + payload] on the device; in a mixed batch padded to the widest game's."""
        blocks = blocks_of(self.blocks, self.backend, ids)
        payload = max(b.emulator.state_bytes(with_rng) for b, _ in blocks)
        rows = torch.zeros((len(ids), state_format.HEADER_BYTES + payload), dtype=torch.uint8, device=self.device)
        for block, positions in blocks:
            rows[index_tensor(positions, self.device), :state_format.HEADER_BYTES] = torch.from_numpy(
                block.header(with_rng)).to(self.device)
        state_format.set_digests(rows, self.backend.save_states(ids, rows, state_format.HEADER_BYTES, with_rng))
        return self.issued.add(rows)

    def restore(self, states, ids: np.ndarray) -> None:
        """Row i of `states` into environment ids[i], every row checked first: a StateError and nothing changes."""
        if len(np.unique(ids)) != len(ids):
            raise ValueError("ids lists an environment twice: one row each")
        rows = state_format.as_rows(states)
        if rows.shape[0] != len(ids):
            raise StateError(f"{rows.shape[0]} state row(s) for {len(ids)} environment(s): pass one row per id")
        trusted = rows in self.issued
        rows = rows.to(self.device)
        with_rng = set()
        for block, positions in blocks_of(self.blocks, self.backend, ids):
            mine = rows if len(positions) == len(ids) else rows[index_tensor(positions, self.device)]
            with_rng.add(block.read_headers(mine[:, :state_format.stated_bytes(mine)]))
        if len(with_rng) != 1:
            raise StateError("some rows hold the sticky-action RNG and some do not; restore them in separate calls")
        with_rng = with_rng.pop()
        faults = self.backend.check_states(ids, rows, state_format.HEADER_BYTES, with_rng,
                                           None if trusted else state_format.digests(rows))
        if faults.any():
            first = ids[np.flatnonzero(faults)[0]]
            block = self.blocks[0] if len(self.blocks) == 1 else self.blocks[int(self.backend.part_of[first])]
            state_format.raise_faults(faults, block.name)
        self.backend.load_states(ids, rows, state_format.HEADER_BYTES, with_rng)
        self.loaded[ids] = True

    def copy(self, src: np.ndarray, dst: np.ndarray, with_rng: bool) -> None:
        """Environment src[i]'s state onto dst[i] on the device (one src may feed every dst)."""
        if len(src) == 1 and len(dst) > 1:
            src = np.repeat(src, len(dst))
        if len(src) != len(dst):
            raise ValueError(f"src_ids ({len(src)}) and dst_ids ({len(dst)}) must pair up (or src_ids be one id)")
        if len(np.unique(dst)) != len(dst):
            raise ValueError("dst_ids lists an environment twice")
        both = np.intersect1d(src, dst)
        if both.size:
            raise ValueError(f"environments {both.tolist()} are both sources and destinations; fork in two calls")
        self.backend.copy_states(src, dst, with_rng)
        self.loaded[dst] = True
