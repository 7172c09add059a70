"""Episode scores kept on the device and read back once per log line (the trainers' only routine host transfer)."""
from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from cule.trainers.common.human_scores import log_scalars


class EpisodeScores:
    """Running returns of `n` envs [n] on `device`; the mean of finished episodes' returns on demand.

    With `games` (a mixed batch's env.games), finished episodes are also summed per game, indexed by the
    info["game"] given to `add`, for `by_game`."""

    def __init__(self, n: int, device: torch.device, games: Sequence[str] = ()):
        self.returns = torch.zeros(n, device=device)
        self.total, self.count = torch.zeros((), device=device), torch.zeros((), device=device)
        self.recent: list[float] = []
        self.games = list(games)
        self.game_total = torch.zeros(len(self.games), device=device)
        self.game_count = torch.zeros(len(self.games), device=device)
        self.game_recent = [math.nan] * len(self.games)  # latest mean return per game

    def add(self, reward: torch.Tensor, done: torch.Tensor, envs: slice = slice(None),
            game: torch.Tensor | None = None) -> None:
        """reward, done [k] for the envs `envs` (a slice of the n) after one step; `game` [k]: their
        info["game"] (ignored without `games`)."""
        returns = self.returns[envs]  # a view: updated in place
        returns += reward.float()
        finished = returns * done
        self.total += finished.sum()
        self.count += done.sum()
        if self.games and game is not None:
            self.game_total.index_add_(0, game.long(), finished)
            self.game_count.index_add_(0, game.long(), done.float())
        returns *= ~done

    def drain(self, ranks=None) -> float:
        """Mean return of the episodes finished (on every rank, given `ranks`) since the last drain, appended to
        `recent`; the previous mean if none finished (nan before the first). Per game likewise into
        `game_recent`. Synchronises with the device."""
        if ranks is not None:
            ranks.sum_(self.total, self.count, *((self.game_total, self.game_count) if self.games else ()))
        count = int(self.count.item())
        if count:
            self.recent.append(self.total.item() / count)
            self.total.zero_()
            self.count.zero_()
        if self.games:
            for k, (total, n) in enumerate(zip(self.game_total.tolist(), self.game_count.tolist())):
                if n:
                    self.game_recent[k] = total / n
            self.game_total.zero_()
            self.game_count.zero_()
        return self.recent[-1] if self.recent else float("nan")

    def by_game(self) -> dict[str, float]:
        """Log scalars as of the last drain: ``return/<game>`` per game, and the human-normalised scores
        (``hns/<game>``, ``hns_mean``, ``hns_median``, see human_scores.log_scalars); {} without `games`, so a
        single game's log is unchanged."""
        if not self.games:
            return {}
        return log_scalars(dict(zip(self.games, self.game_recent)))
