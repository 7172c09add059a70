"""Which environments a vector env returned last, which are ready, and which still step in the background.

With ``batch_size < num_envs`` (asynchronous batches), ``send`` starts the
environments of the last batch returned and ``recv`` returns the next
``batch_size`` environments in a fixed round-robin order, joining or splitting
the chunks they were stepped in, so runs are reproducible.
"""
from __future__ import annotations

import collections
from typing import Any

import numpy as np

NO_IDS = np.empty(0, np.int32)
NO_IDS.flags.writeable = False


class BatchQueue:
    def __init__(self, batch_size: int):
        self.batch_size = batch_size
        self.last_ids: np.ndarray | None = None  # env ids of the last batch returned; None before the first reset
        # ids of the stepped environments not yet returned, oldest first, in int32 chunks
        self._ready: collections.deque[np.ndarray] = collections.deque()
        # (future, ids) of steps left running in the background, oldest first
        self._pending: collections.deque[tuple[Any, np.ndarray]] = collections.deque()

    def restart(self, ids: np.ndarray) -> None:
        """After a full reset: `ids` are ready, nothing else."""
        self._ready = collections.deque([ids])

    def sending(self) -> np.ndarray:
        """The ids the next send() steps; until the next batch is taken, none await actions."""
        if self.last_ids is None:
            raise RuntimeError("call reset() before step() or send()")
        if self.last_ids is NO_IDS:
            raise RuntimeError("send() twice (or from two threads at once): the last batch returned is stepping "
                               "already; recv() the next batch, then send() its actions")
        ids, self.last_ids = self.last_ids, NO_IDS
        return ids

    def sent(self, ids: np.ndarray, job) -> None:
        """`ids` were stepped at once (job None) or are stepping in the background (job: a future)."""
        if job is None:
            self._ready.append(ids)
        else:
            self._pending.append((job, ids))

    def wait_for_batch(self) -> None:
        """Waits for background steps until batch_size environments are ready."""
        if self.last_ids is None:
            raise RuntimeError("call reset() before recv()")
        if self.last_ids is not NO_IDS:  # the next batch would take their place, and they would never step again
            raise RuntimeError(f"recv() before send(): environments {self.last_ids.tolist()} of the last batch "
                               f"returned wait for their actions; send() them first (each send() steps the "
                               f"batch that reset() or recv() returned last)")
        while sum(map(len, self._ready)) < self.batch_size:
            if not self._pending:
                raise RuntimeError("recv() without a matching send()")
            self._finish_oldest()

    def drain(self) -> None:
        """Waits for every step still running in the background."""
        while self._pending:
            self._finish_oldest()

    def take(self) -> np.ndarray:
        """The next batch_size ready environments, joining or splitting the chunks they were stepped in."""
        ids = self._ready.popleft()
        while len(ids) < self.batch_size:
            ids = np.concatenate((ids, self._ready.popleft()))
        if len(ids) > self.batch_size:
            self._ready.appendleft(ids[self.batch_size:])
            ids = ids[:self.batch_size]
        self.last_ids = ids
        return ids

    def _finish_oldest(self) -> None:
        job, ids = self._pending.popleft()
        job.result()
        self._ready.append(ids)
