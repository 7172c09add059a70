"""Training logs: a CSV always, TensorBoard when installed (pip install tensorboard), and a progress bar with FPS."""
from __future__ import annotations

import contextlib
import csv
import os
import time
from pathlib import Path

TESTS = "tests.csv"  # test scores during training, beside log.csv


def _header(path: Path) -> list[str]:
    with open(path, newline="") as f:
        return next(csv.reader(f))


def _is_evaluation_at(row: dict, frames: int) -> bool:
    """Whether a log.csv row is the final evaluation of the agent at `frames` (its eval_ columns filled)."""
    return float(row["frames"]) == frames and any(v for k, v in row.items() if k and k.startswith("eval_"))


def _keep_rows_until(path: Path, frames: int) -> tuple[list[str] | None, float, float]:
    """Truncates the CSV at `path` to its rows up to `frames`; returns its columns (None if it has none) and the
    last kept row's wall and CPU time (0 if none). The final evaluation of the agent at `frames` goes too: the
    resumed run evaluates its own final agent, which replaces it in eval.json, so the log keeps one row per
    evaluation."""
    if not path.exists():
        return None, 0.0, 0.0
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, [r for r in reader
                                           if float(r["frames"]) <= frames and not _is_evaluation_at(r, frames)]
    if not fields:
        return None, 0.0, 0.0
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    if not rows:
        return list(fields), 0.0, 0.0
    return list(fields), float(rows[-1]["wall_time"]), float(rows[-1].get("cpu_time") or 0.0)


class Logger:
    def __init__(self, output_dir: str | Path, total_frames: int, start_frames: int = 0, enabled: bool = True):
        self.enabled = enabled
        self.dir = Path(output_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.start = time.perf_counter()
        # CPU seconds of all this process's threads: other work on the machine slows the wall clock, not this
        self.start_cpu = time.process_time()
        self.start_frames = start_frames
        self._fields: list[str] | None = None  # a resumed log's columns, which its new rows keep
        # A resumed run continues the log (and its wall clock) and its tests from the checkpoint's frame count,
        # dropping rows logged after that checkpoint; a fresh run starts a new log and has no tests yet.
        self.wall_offset = self.cpu_offset = 0.0
        if enabled and start_frames > 0:
            self._fields, self.wall_offset, self.cpu_offset = _keep_rows_until(self.dir / "log.csv", start_frames)
            _keep_rows_until(self.dir / TESTS, start_frames)
        elif enabled:
            (self.dir / TESTS).unlink(missing_ok=True)
        self._csv = open(self.dir / "log.csv", "a" if start_frames > 0 else "w", newline="") if enabled else None
        self._writer = None
        self._suspended = self._suspended_cpu = 0.0  # time spent in suspended(): not the trainer's
        self._tb = None
        if enabled:
            try:
                from torch.utils.tensorboard import SummaryWriter
                self._tb = SummaryWriter(str(self.dir / "tensorboard"))
            except (ImportError, ModuleNotFoundError):
                self._tb = None
        self._bar = None
        if enabled:
            try:
                from tqdm import tqdm
                # TQDM_DISABLE read now: tqdm reads it once, at its import, which may come before it is set
                self._bar = tqdm(total=total_frames, initial=start_frames, unit="frame", unit_scale=True,
                                 dynamic_ncols=True, disable=os.environ.get("TQDM_DISABLE", "") not in ("", "0"))
            except ImportError:
                pass

    def _training_time(self) -> tuple[float, float]:
        """Wall and CPU seconds of training since this process started, time in suspended() left out."""
        return (time.perf_counter() - self.start - self._suspended,
                time.process_time() - self.start_cpu - self._suspended_cpu)

    def clocks(self) -> dict:
        """The clocks of a row: the run's training wall and CPU seconds, resumes included."""
        wall, cpu = self._training_time()
        return {"wall_time": round(self.wall_offset + wall, 3), "cpu_time": round(self.cpu_offset + cpu, 3)}

    def fps(self, frames: int) -> float:
        return (frames - self.start_frames) / max(self._training_time()[0], 1e-9)

    @contextlib.contextmanager
    def suspended(self):
        """Training stands still inside (a test of the agent): its wall and CPU time are not the trainer's, so
        the log's clocks and frames/s leave them out."""
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self._suspended += time.perf_counter() - wall
            self._suspended_cpu += time.process_time() - cpu

    def test(self, frames: int, clocks: dict | None = None, **scores: float) -> None:
        """A test of the agent at a frame count: a row of tests.csv (frames, the training clocks, the scores
        given) and the scores, prefixed test_, in TensorBoard. `clocks`: the training clocks when the agent
        was the one tested (a snapshot tested after the run), instead of now's."""
        if not self.enabled:
            return
        row = {"frames": frames, **(clocks or self.clocks()), **{k: float(v) for k, v in scores.items()}}
        path = self.dir / TESTS
        fresh = not path.exists() or path.stat().st_size == 0
        with open(path, "a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(row) if fresh else _header(path))
            if fresh:
                writer.writeheader()
            writer.writerow({k: row.get(k) for k in writer.fieldnames})
        if self._tb:
            for k, v in scores.items():
                self._tb.add_scalar(f"test_{k}", v, frames)

    def tested_frames(self) -> list[int]:
        """The frame counts of the tests in tests.csv."""
        path = self.dir / TESTS
        if not path.exists() or path.stat().st_size == 0:
            return []
        with open(path, newline="") as f:
            return [int(float(row["frames"])) for row in csv.DictReader(f)]

    def log(self, frames: int, **scalars: float) -> None:
        """Scalars at a frame count (host floats: the only values a trainer brings back from the device)."""
        if not self.enabled:
            return
        row = {"frames": frames, **self.clocks(), "fps": round(self.fps(frames), 1),
               **{k: float(v) for k, v in scalars.items()}}
        if self._writer is None:
            self._writer = csv.DictWriter(self._csv, fieldnames=self._fields or list(row))
            if self._csv.tell() == 0:
                self._writer.writeheader()
        self._writer.writerow({k: row.get(k) for k in self._writer.fieldnames})
        self._csv.flush()
        if self._tb:
            for k, v in row.items():
                if k != "frames":
                    self._tb.add_scalar(k, v, frames)
        if self._bar is not None:
            self._bar.n = frames
            shown = ("fps", "episode_return", "loss", "hns_median")
            self._bar.set_postfix({k: f"{v:.3g}" for k, v in row.items() if k in shown})
            self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        if self._tb:
            self._tb.close()
        if self._csv:
            self._csv.close()
