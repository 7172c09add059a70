"""Episode scores kept on the device and read back once per log line (the trainers' only routine host transfer)."""
from __future__ import annotations

import torch


class EpisodeScores:
    """Running returns of `n` envs [n] on `device`; the mean of finished episodes' returns on demand."""

    def __init__(self, n: int, device: torch.device):
        self.returns = torch.zeros(n, device=device)
        self.total, self.count = torch.zeros((), device=device), torch.zeros((), device=device)
        self.recent: list[float] = []

    def add(self, reward: torch.Tensor, done: torch.Tensor, envs: slice = slice(None)) -> None:
        """reward, done [k] for the envs `envs` (a slice of the n) after one step."""
        returns = self.returns[envs]  # a view: updated in place
        returns += reward.float()
        self.total += (returns * done).sum()
        self.count += done.sum()
        returns *= ~done

    def drain(self, ranks=None) -> float:
        """Mean return of the episodes finished (on every rank, given `ranks`) since the last drain, appended to
        `recent`; the previous mean if none finished (nan before the first). Synchronises with the device."""
        if ranks is not None:
            ranks.sum_(self.total, self.count)
        count = int(self.count.item())
        if count:
            self.recent.append(self.total.item() / count)
            self.total.zero_()
            self.count.zero_()
        return self.recent[-1] if self.recent else float("nan")
