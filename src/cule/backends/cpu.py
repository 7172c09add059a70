"""The CPU backend: the host batch (cule._core.Emulator) stepped by its own threads.

Results are numpy arrays wrapped as CPU tensors without a copy. Asynchronous
batches step in one background thread, which releases the GIL while the
emulator's threads work.
"""
from __future__ import annotations

import numpy as np
import torch

from .. import _core, continuous
from . import Backend, BackgroundStep, StepResult, check_action_batch, result_column


class CpuBackend(Backend):
    def __init__(self, emulator, *, action_set: np.ndarray, obs_shape: tuple[int, ...], num_threads: int,
                 background: bool, continuous_threshold: float | None = None):
        self.emulator = emulator
        self.continuous_threshold = continuous_threshold
        self.device = torch.device("cpu")
        self.action_set = action_set
        self.obs_shape = obs_shape
        self.num_threads = num_threads
        self._background = BackgroundStep(background)

    def actions(self, actions, batch_size: int) -> np.ndarray:
        if isinstance(actions, torch.Tensor):
            if not actions.is_cpu:  # "cpu" and "cpu:0" alike
                raise ValueError(f"actions are on {actions.device}, the environment on {self.device}: "
                                 f"move them with .to({str(self.device)!r})")
            # detach() makes a new tensor each step; only a float tensor that requires grad needs it (and then
            # gets the dtype error below)
            actions = actions.detach().numpy() if actions.requires_grad else actions.numpy()
        else:
            actions = np.asarray(actions)
        if self.continuous_threshold is not None:
            return continuous.host_words(actions, self.continuous_threshold, batch_size)
        n = len(self.action_set)
        # Valid indices pass in a few cheap calls (argmin/argmax cost far less than ufuncs); anything else takes
        # the checks below, which say what is wrong.
        if not (actions.dtype.kind in "iu" and actions.shape == (batch_size,)
                and actions.item(actions.argmin()) >= 0 and actions.item(actions.argmax()) < n):
            check_action_batch(actions, batch_size)
            bad = (actions < 0) | (actions >= n)
            if bad.any():
                raise ValueError(f"action {int(actions[bad][0])} is outside the action set (valid: 0..{n - 1})")
        return self.action_set[actions]

    def run(self, ids, actions, seeds, force_reset):
        args = (ids, actions if actions is not None else np.zeros(len(ids), np.int32), seeds, force_reset,
                self.num_threads)
        self._background.forked()  # the emulator's own threads are made again in C++ (ThreadPool)
        if self._background.executor is None or force_reset:
            self.emulator.vector_run(*args)
            return None
        return self._background.submit(self.emulator.vector_run, *args)

    def gather(self, ids, same_step):
        obs, final, outputs, env_ids = self._results(ids, same_step)
        # every array starts on 64 bytes, which XLA's CPU client needs to take a buffer without a copy (cule.jax)
        return StepResult(torch.from_numpy(obs), *map(torch.from_numpy, outputs), torch.from_numpy(env_ids),
                          None if final is None else torch.from_numpy(final))

    def gather_arrays(self, ids, same_step):
        """gather() as the fresh numpy arrays the tensors wrap: for cule.AtariEnv, whose outputs are numpy."""
        obs, final, outputs, env_ids = self._results(ids, same_step)
        return StepResult(obs, *outputs, env_ids, final)

    def _results(self, ids, same_step):
        # the step's threads copy the results too, unless a step may be running on them in the background
        return self.emulator.results(ids, self.obs_shape, same_step, self._background.executor is None)

    def screens(self):
        return torch.from_numpy(self.emulator.observe()[0])

    def last_output(self, name):
        return torch.from_numpy(result_column(self.emulator.arrays()["results"], name))

    def ram(self):
        return torch.from_numpy(self.emulator.ram_rows(np.arange(self.emulator.num_envs, dtype=np.int32)))

    def save_states(self, ids, rows, offset, with_rng):
        return torch.from_numpy(self.emulator.save_states(ids, rows.numpy(), offset, with_rng).view(np.int64))

    def check_states(self, ids, rows, offset, with_rng, digests):
        expected = None if digests is None else digests.cpu().numpy().view(np.uint64)
        return self.emulator.check_states(np.ascontiguousarray(rows.cpu().numpy()), offset, with_rng, expected)

    def load_states(self, ids, rows, offset, with_rng):
        self.emulator.load_states(ids, np.ascontiguousarray(rows.cpu().numpy()), offset, with_rng)

    def copy_states(self, src, dst, with_rng):
        self.emulator.copy_states(src, dst, with_rng)

    def close(self):
        self._background.close()
