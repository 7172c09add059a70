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

Each game is a single-game env of its own (its ROM and arrays) behind one
backend: on the CPU all games' environments share one pool of threads,
stepped as one job; on a GPU the games of one mapper step together (one
launch of each kernel per mapper present: the kernels are built per mapper)
and the results are put together in batch order on the device. Environment i
of the batch is exactly environment i - start of its game's block in a
single-game env with ``full_action_space=True`` seeded the same way.
"""
from __future__ import annotations

import concurrent.futures
import os
from typing import Any

import numpy as np
import torch

from . import _core
from . import state as state_format
from .backends import Backend, StepResult
from .backends.cpu import CpuBackend
from .games import FULL_ACTION_SET
from .palettes import palette_for
from .vector_env import AtariVectorEnv

ALL_ACTIONS = np.array(FULL_ACTION_SET, dtype=np.int32)
# Arguments that belong to the batch, not to a game's block.
_BATCH_ARGUMENTS = ("batch_size", "num_threads")


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
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise ValueError(f"each game needs an int >= 1 of environments, got {count!r} for {game!r}")
    names = [g for g, _ in counts]
    if len(set(names)) != len(names):
        raise ValueError(f"a game is listed twice in {names}; give it more environments with a dict "
                         f"{{game: count}} instead")
    return [(g, int(c)) for g, c in counts]


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
        self._executor = concurrent.futures.ThreadPoolExecutor(1) if background and on_cpu else None
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

    def on_device(self, positions: np.ndarray, device: torch.device | None = None) -> torch.Tensor:
        """Batch positions as an index tensor on `device` (default: the batch's)."""
        return torch.from_numpy(positions).to(device or self.device, dtype=torch.long)

    def actions(self, actions, batch_size: int):
        return self.parts[0].actions(actions, batch_size)  # every game has ALE's 18 actions, in id order

    def run(self, ids, actions, seeds, force_reset):
        split = self.split(ids)
        if self._pool is None:  # devices: each mapper's kernels queued in turn on the stream
            for group, positions, members in self.group_split(ids):
                group_actions = None if actions is None else actions[self.on_device(positions)]
                group.run(members, group_actions, None if seeds is None else seeds[positions], force_reset)
            return None
        if actions is None:
            actions = np.zeros(len(ids), np.int32)
        args = (self._pool, [self.parts[k].emulator for k, _, _ in split], [local for _, _, local in split],
                [actions[positions] for _, positions, _ in split],
                [None if seeds is None else seeds[positions] for _, positions, _ in split], force_reset)
        if self._executor is None or force_reset:
            _core.run_batches(*args)
            return None
        return self._executor.submit(_core.run_batches, *args)

    def gather(self, ids, same_step):
        split = self.split(ids)
        if self._pool is not None:  # one call fills the batch's arrays
            obs_shape = self.parts[0].obs_shape
            obs, final, outputs = _core.results_at([self.parts[k].emulator for k, _, _ in split],
                                                   [local for _, _, local in split],
                                                   [positions for _, positions, _ in split], obs_shape, same_step,
                                                   self._pool if self._executor is None else None)
            return StepResult(torch.from_numpy(obs), *map(torch.from_numpy, outputs), torch.from_numpy(ids.copy()),
                              None if final is None else torch.from_numpy(final))
        obs_shape = self.parts[0].obs_shape
        results = []  # (positions on the device, [obs, *step outputs, final_obs or None]) per mapper group
        for group, positions, members in self.group_split(ids):
            obs, outputs, final = group.gather(members, obs_shape, same_step)
            results.append((self.on_device(positions), [obs, *outputs, final]))

        def merged(column: int) -> torch.Tensor:
            first = results[0][1][column]
            out = first.new_zeros((len(ids), *first.shape[1:]))
            for positions, r in results:
                out[positions] = r[column]
            return out

        columns = range(1 + len(_core.step_outputs))
        final = merged(len(columns)) if same_step else None
        return StepResult(*map(merged, columns), torch.from_numpy(ids.copy()).to(self.device), final)

    def screens(self):
        screens, lives = zip(*(p.screens() for p in self.parts))
        height = max(s.shape[1] for s in screens)
        padded = [torch.nn.functional.pad(s, (0, 0, 0, height - s.shape[1])) for s in screens]
        return torch.cat(padded), torch.cat(lives)

    def ram(self):
        return torch.cat([p.ram() for p in self.parts])

    def save_states(self, ids, rows, offset, with_rng):
        raise NotImplementedError("MixedAtariVectorEnv saves states per game")

    def load_states(self, ids, rows, offset, with_rng):
        raise NotImplementedError("MixedAtariVectorEnv loads states per game")

    def check_states(self, rows, offset, with_rng, digests):
        raise NotImplementedError("MixedAtariVectorEnv checks states per game")

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
        if self._executor is not None:
            self._executor.shutdown()
        for p in self.parts:
            p.close()


class MixedAtariVectorEnv(AtariVectorEnv):
    """A batch whose environments play different games (see the module's docstring); made by
    ``cule.AtariVectorEnv`` when ``game`` is a list or a dict of counts.

    Args:
        games: a list of games (ALE ids, gymnasium names or ROM paths), each given ``num_envs``
            environments, or a dict ``{game: count}``.
        num_envs: environments per game for a list (default 1); for a dict, None or the total.
        Every other argument of ``AtariVectorEnv`` applies to every game, but for ``full_action_space``
        (always ALE's 18 actions) and ``mode`` and ``difficulty`` (each game's default).
    """

    def __init__(self, games, num_envs: int | None = None, **kwargs: Any):
        self.emulator = None
        self._parts: list[AtariVectorEnv] = []
        counts = game_counts(games, num_envs)
        for name in ("mode", "difficulty"):
            if kwargs.get(name) is not None:
                raise ValueError(f"{name} applies to one game; a mixed batch plays each game's default {name}")
        if kwargs.pop("full_action_space", True) is not True:
            raise ValueError("a mixed batch uses ALE's full action set (Discrete(18)); full_action_space=False "
                             "would give each game different action indices")
        batch = {name: kwargs.pop(name) for name in _BATCH_ARGUMENTS if name in kwargs}
        total = sum(c for _, c in counts)
        batch_size = int(batch.get("batch_size", 0)) or total
        if not 1 <= batch_size <= total:
            raise ValueError(f"batch_size ({batch_size}) must lie in [1, {total}] (the environments of all games)")
        self._parts = [AtariVectorEnv(game, count, full_action_space=True, num_threads=1, _action_set=ALL_ACTIONS,
                                      **kwargs) for game, count in counts]
        first = self._parts[0]
        for part in self._parts[1:]:
            if part.single_observation_space.shape != first.single_observation_space.shape:
                raise ValueError(f"{part.game} observes {part.single_observation_space.shape}, {first.game} "
                                 f"{first.single_observation_space.shape}: a mixed batch needs one shape (give "
                                 f"AtariVectorEnv img_height and img_width to resize every game to it)")
        self.games = [p.game or p.rom.md5 for p in self._parts]
        for name in ("autoreset_mode", "metadata", "_same_step", "device", "frameskip", "stack_num", "grayscale",
                     "img_height", "img_width", "reset_mode", "_gymnasium", "_frame_shape"):
            setattr(self, name, getattr(first, name))
        self.num_envs, self.batch_size = total, batch_size
        self.num_threads = int(batch.get("num_threads", 0))
        self.action_set = ALL_ACTIONS.copy()
        self._make_spaces()
        self._make_queues()
        self.backend = MixedBackend([p.backend for p in self._parts], [c for _, c in counts], self.device,
                                    self.num_threads, background=self.batch_size != self.num_envs)
        # info["game"]: the game of each environment, on the device
        self._game_of = torch.from_numpy(self.backend.part_of).to(self.device)

    def _check_open(self):
        if not self._parts:
            raise RuntimeError("this AtariVectorEnv is closed; create a new one")

    def close(self, **kwargs):
        if self._parts:
            self._drain()
            self.backend.close()
        self._parts = []

    def _gather(self, ids: np.ndarray):
        obs, rewards, terminated, truncated, info = super()._gather(ids)
        info["game"] = self._game_of[info["env_id"].long()]
        return obs, rewards, terminated, truncated, info

    def get_screen_rgb(self) -> torch.Tensor:
        """RGB, uint8 [N, H, 160, 3] (H: the tallest game's; shorter screens are padded with black)."""
        screen = self.get_screen().cpu().numpy()
        rgb = np.zeros((*screen.shape, 3), np.uint8)
        for k, part in enumerate(self._parts):
            block = slice(self.backend.offsets[k], self.backend.offsets[k + 1])
            rgb[block] = palette_for(part.emulator.is_pal)[0][screen[block]]
        return torch.from_numpy(rgb).to(self.device)

    # ---- states: each game's rows as its single-game env makes them, padded to the widest game's

    def _clone_rows(self, ids: np.ndarray, with_rng: bool) -> torch.Tensor:
        pieces = [(positions, self._parts[k]._clone_rows(local, with_rng))
                  for k, positions, local in self.backend.split(ids)]
        rows = torch.zeros((len(ids), max(r.shape[1] for _, r in pieces)), dtype=torch.uint8, device=self.device)
        for positions, r in pieces:
            rows[self.backend.on_device(positions), :r.shape[1]] = r
        return self._issue(rows)

    def _restore_rows(self, ids: np.ndarray, rows: torch.Tensor) -> None:
        trusted = self._is_issued(rows)
        rows = rows.to(self.device)
        pieces = []
        for k, positions, local in self.backend.split(ids):
            part = self._parts[k]
            mine = rows[self.backend.on_device(positions)]
            mine = mine[:, :state_format.stated_bytes(mine)]
            pieces.append((part, local, mine, part._check_rows(mine, trusted)))
        for part, local, mine, with_rng in pieces:  # every game's rows were checked: now load
            part.backend.load_states(local, mine, state_format.HEADER_BYTES, with_rng)
