"""Many games in one batch: ``cule.AtariVectorEnv(["pong", "breakout", ...], num_envs=...)``.

Environments are laid out in blocks, one per game in the order given: a list
gives every game ``num_envs`` environments (as ale-py's multi-ROM proposal,
ALE #694, replicates each ROM), a dict ``{game: count}`` gives each its own
count. ``env.games`` lists the games; ``info["game"]`` (int32 per returned
environment) indexes it.

Every environment uses ALE's full action set, ``Discrete(18)`` indexed by ALE
action id, as IMPALA's multi-task agent does; a game whose legal set is
smaller (skiing, lost_luggage) plays an illegal action as NOOP, which is what
ALE does with it. Observations share one shape: PAL games and taller screens
are resized like the others (with ``img_height=None`` every game must have the
same screen height).

Each game is a block of its own (cule.blocks.GameBlock: its ROM, emulator
and arrays), the blocks' backends composed into one (MixedBackend): on the
CPU all games' environments share one pool of threads, stepped as one job; on a GPU the games of one mapper step together (one
launch of each kernel per mapper present: the kernels are built per mapper)
and the results are put together in batch order on the device. Environment i
of the batch is exactly environment i - start of its game's block in a
single-game env with ``full_action_space=True`` seeded the same way.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np
import torch

from . import _core, checks
from .backends import Backend, BackendSettings, BackgroundStep, StepResult, create, index_tensor
from .backends.cpu import CpuBackend
from .games import FULL_ACTION_SET
from .roms import game_key

ALL_ACTIONS = np.array(FULL_ACTION_SET, dtype=np.int32)


def check_options(mode, difficulty, full_action_space) -> bool:
    """What a mixed batch takes of the one-game options: each game's default mode and difficulty, ALE's full
    action set (returns full_action_space, always True)."""
    for name, value in (("mode", mode), ("difficulty", difficulty)):
        if value is not None:
            raise ValueError(f"{name} applies to one game; a mixed batch plays each game's default {name}")
    if full_action_space is not None and not full_action_space:
        raise ValueError("a mixed batch uses ALE's full action set (Discrete(18)); full_action_space=False "
                         "would give each game different action indices")
    return True


def check_shapes(blocks) -> None:
    """One observation shape for every game of a batch."""
    first = blocks[0]
    for block in blocks[1:]:
        if (block.img_height, block.img_width) != (first.img_height, first.img_width):
            raise ValueError(f"{block.name} observes {block.img_height}x{block.img_width}, {first.name} "
                             f"{first.img_height}x{first.img_width}: a mixed batch needs one shape (give "
                             f"AtariVectorEnv img_height and img_width to resize every game to it)")


def game_counts(games, num_envs) -> list[tuple[str, int]]:
    """(game, environments) per block, in batch order, from a list of games (num_envs each, default 1) or a dict
    of counts."""
    if isinstance(games, dict):
        if not games:
            raise ValueError("a mixed batch needs at least one game")
        counts = list(games.items())
        total = sum(c for _, c in counts)
        if num_envs is not None and num_envs != total:
            raise ValueError(f"num_envs={num_envs} disagrees with the counts given per game (total {total}); "
                             f"leave num_envs out when giving a dict")
    else:
        if not games:
            raise ValueError("a mixed batch needs at least one game")
        per_game = 1 if num_envs is None else num_envs
        counts = [(g, per_game) for g in games]
    for game, count in counts:
        if not isinstance(game, str):
            raise TypeError(f"games are named by str (ALE id, gymnasium name or ROM path), got {game!r}")
        if not checks.is_int(count) or count < 1:
            raise ValueError(f"each game needs an int >= 1 of environments, got {count!r} for {game!r}")
    names = [g for g, _ in counts]
    if len(set(map(game_key, names))) != len(names):  # "pong" and "ALE/Pong-v5" are one game
        raise ValueError(f"a game is listed twice in {names}; give it more environments with a dict "
                         f"{{game: count}} instead")
    return [(g, int(c)) for g, c in counts]


def batch_backend(blocks, device: torch.device, settings: BackendSettings) -> Backend:
    """The backend of a batch of blocks (cule.blocks): its block's own for one game; for several, MixedBackend
    over the blocks' own, which runs them on one pool of `settings.num_threads` threads."""
    if len(blocks) == 1:
        return create(blocks[0].emulator, device, settings)
    own = dataclasses.replace(settings, num_threads=1, background=False)
    if device.type == "cuda":  # every mapper's kernels, compiled side by side
        from .backends.cuda import load_many
        from .kernels import KernelBuild
        load_many([KernelBuild(b.emulator.cart) for b in blocks], device.index or 0)
    return MixedBackend([create(b.emulator, device, own) for b in blocks], [b.count for b in blocks], device,
                        settings.num_threads, settings.background)


class MixedBackend(Backend):
    """One backend over per-game backends. Environment ids are the batch's; game k's block starts at
    offsets[k]."""

    def __init__(self, parts: list[Backend], counts: list[int], device: torch.device, num_threads: int,
                 background: bool):
        self.parts = parts
        self.device = device
        self.emulator = None
        self.offsets = np.cumsum([0, *counts])
        self.part_of = np.repeat(np.arange(len(parts), dtype=np.int32), counts)  # [N] game index
        self.local = (np.arange(self.offsets[-1]) - self.offsets[self.part_of]).astype(np.int32)  # [N] id in its game
        self._split: tuple[np.ndarray, list] | None = None
        on_cpu = all(isinstance(p, CpuBackend) for p in parts)
        # CPU: every game's environments on one pool, so threads balance work across games.
        self._pool = _core.ThreadPool(num_threads or os.cpu_count() or 1) if on_cpu else None
        self._background = BackgroundStep(background and on_cpu)
        # Devices: the games of one mapper step together, one launch of each kernel per mapper present.
        self.groups: list[tuple[Any, list[int]]] = []
        if not on_cpu:
            from .backends.cuda import CudaGroup
            by_cart: dict[str, list[int]] = {}
            for k, p in enumerate(parts):
                by_cart.setdefault(p.emulator.cart, []).append(k)
            self.groups = [(CudaGroup([parts[k] for k in ks]), ks) for ks in by_cart.values()]
        self._group_split: tuple[np.ndarray, list] | None = None

    def split(self, ids: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(game k, positions in ids, ids within game k) for each game with environments among ids; kept for the
        next call, which usually has the same ids (a whole batch, or the same round-robin chunk)."""
        if self._split is not None and np.array_equal(self._split[0], ids):
            return self._split[1]
        part = self.part_of[ids]
        out = []
        for k in np.unique(part):
            positions = np.flatnonzero(part == k).astype(np.int32)
            out.append((int(k), positions, self.local[ids[positions]]))
        self._split = (ids.copy(), out)
        return out

    def group_split(self, ids: np.ndarray) -> list[tuple[Any, np.ndarray, list[tuple[int, np.ndarray]]]]:
        """(group, positions in ids, members: (game's index in the group, ids within the game)) for each
        mapper group with environments among ids, positions in the members' order; kept like split()'s."""
        if self._group_split is not None and np.array_equal(self._group_split[0], ids):
            return self._group_split[1]
        by_game = {k: (positions, local) for k, positions, local in self.split(ids)}
        out = []
        for group, games in self.groups:
            present = [(j, k) for j, k in enumerate(games) if k in by_game]
            if present:
                positions = np.concatenate([by_game[k][0] for _, k in present])
                out.append((group, positions, [(j, by_game[k][1]) for j, k in present]))
        self._group_split = (ids.copy(), out)
        return out

    def actions(self, actions, batch_size: int):
        return self.parts[0].actions(actions, batch_size)  # every game has ALE's 18 actions, in id order

    def run(self, ids, actions, seeds, force_reset):
        split = self.split(ids)
        if self._pool is None:  # devices: each mapper's kernels queued in turn on the stream
            for group, positions, members in self.group_split(ids):
                group_actions = None if actions is None else actions[index_tensor(positions, self.device)]
                group.run(members, group_actions, None if seeds is None else seeds[positions], force_reset)
            return None
        if self._background.forked():  # the parent's pool runs jobs on the caller alone here; threads of its own
            self._pool = _core.ThreadPool(self._pool.size)
        if actions is None:
            actions = np.zeros(len(ids), np.int32)
        args = (self._pool, [self.parts[k].emulator for k, _, _ in split], [local for _, _, local in split],
                [actions[positions] for _, positions, _ in split],
                [None if seeds is None else seeds[positions] for _, positions, _ in split], force_reset)
        if self._background.executor is None or force_reset:
            _core.run_batches(*args)
            return None
        return self._background.submit(_core.run_batches, *args)

    def gather(self, ids, same_step):
        split = self.split(ids)
        if self._pool is not None:  # one call fills the batch's arrays
            obs_shape = self.parts[0].obs_shape
            obs, final, outputs, env_ids = _core.results_at(
                [self.parts[k].emulator for k, _, _ in split], [local for _, _, local in split],
                [positions for _, positions, _ in split], obs_shape, same_step,
                self._pool if self._background.executor is None else None, ids)
            return StepResult(torch.from_numpy(obs), *map(torch.from_numpy, outputs), torch.from_numpy(env_ids),
                              None if final is None else torch.from_numpy(final))
        obs_shape = self.parts[0].obs_shape
        results = []  # (positions on the device, [obs, *step outputs, final_obs or None]) per mapper group
        for group, positions, members in self.group_split(ids):
            obs, outputs, final = group.gather(members, obs_shape, same_step)
            results.append((index_tensor(positions, self.device), [obs, *outputs, final]))

        def merged(column: int) -> torch.Tensor:
            first = results[0][1][column]
            out = first.new_zeros((len(ids), *first.shape[1:]))
            for positions, r in results:
                out[positions] = r[column]
            return out

        columns = range(1 + len(_core.step_outputs))
        final = merged(len(columns)) if same_step else None
        return StepResult(*map(merged, columns), torch.from_numpy(ids).clone().to(self.device), final)

    def screens(self):
        screens = [p.screens() for p in self.parts]
        height = max(s.shape[1] for s in screens)
        return torch.cat([torch.nn.functional.pad(s, (0, 0, 0, height - s.shape[1])) for s in screens])

    def last_output(self, name):
        return torch.cat([p.last_output(name) for p in self.parts])

    def ram(self):
        return torch.cat([p.ram() for p in self.parts])

    # States: rows as wide as the widest game's, each game's own row (header and payload) at its start.

    def _rows_of(self, k: int, rows: torch.Tensor, positions: np.ndarray, offset: int, with_rng: bool):
        """Game k's rows among `rows` (a copy), cut to its own width."""
        width = offset + self.parts[k].emulator.state_bytes(with_rng)
        return rows[index_tensor(positions, rows.device), :width]

    def save_states(self, ids, rows, offset, with_rng):
        digests = torch.zeros(len(ids), dtype=torch.int64, device=self.device)
        for k, positions, local in self.split(ids):
            mine = self._rows_of(k, rows, positions, offset, with_rng).contiguous()
            on = index_tensor(positions, rows.device)
            digests[index_tensor(positions, self.device)] = self.parts[k].save_states(local, mine, offset, with_rng).to(
                self.device)
            rows[on, :mine.shape[1]] = mine
        return digests

    def check_states(self, ids, rows, offset, with_rng, digests):
        faults = np.zeros(len(rows), dtype=np.int32)
        for k, positions, local in self.split(ids):
            mine = self._rows_of(k, rows, positions, offset, with_rng).contiguous()
            theirs = None if digests is None else digests[index_tensor(positions, digests.device)]
            faults[positions] = self.parts[k].check_states(local, mine, offset, with_rng, theirs)
        return faults

    def load_states(self, ids, rows, offset, with_rng):
        for k, positions, local in self.split(ids):
            self.parts[k].load_states(local, self._rows_of(k, rows, positions, offset, with_rng).contiguous(),
                                      offset, with_rng)

    def copy_states(self, src, dst, with_rng):
        games = self.part_of[src]
        if (games != self.part_of[dst]).any():
            i = int(np.flatnonzero(games != self.part_of[dst])[0])
            raise ValueError(f"environment {src[i]} and {dst[i]} play different games; a state can only be copied "
                             f"within a game's block")
        for k, positions, local in self.split(src):
            self.parts[k].copy_states(local, self.local[dst[positions]], with_rng)

    def check_deferred(self):
        for p in self.parts:
            p.check_deferred()

    def close(self):
        self._background.close()
        for p in self.parts:
            p.close()
