"""Training logs: a CSV always, TensorBoard when installed (pip install tensorboard), and a progress bar with FPS."""
from __future__ import annotations

import csv
import time
from pathlib import Path


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
        # A resumed run continues the log (and its wall clock) from the checkpoint's frame count, dropping rows
        # logged after that checkpoint; a fresh run starts a new log.
        self.wall_offset, self.cpu_offset = (self._keep_rows_until(start_frames) if enabled and start_frames > 0
                                             else (0.0, 0.0))
        self._csv = open(self.dir / "log.csv", "a" if start_frames > 0 else "w", newline="") if enabled else None
        self._writer = None
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
                self._bar = tqdm(total=total_frames, initial=start_frames, unit="frame", unit_scale=True,
                                 dynamic_ncols=True)
            except ImportError:
                pass

    def _keep_rows_until(self, frames: int) -> tuple[float, float]:
        """Truncates log.csv to its rows up to `frames`; returns the last kept row's wall and CPU time (0 if
        none)."""
        path = self.dir / "log.csv"
        if not path.exists():
            return 0.0, 0.0
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            fields, rows = reader.fieldnames, [r for r in reader if float(r["frames"]) <= frames]
        if not fields:
            return 0.0, 0.0
        self._fields = list(fields)
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(rows)
        if not rows:
            return 0.0, 0.0
        return float(rows[-1]["wall_time"]), float(rows[-1].get("cpu_time") or 0.0)

    def fps(self, frames: int) -> float:
        return (frames - self.start_frames) / max(time.perf_counter() - self.start, 1e-9)

    def log(self, frames: int, **scalars: float) -> None:
        """Scalars at a frame count (host floats: the only values a trainer brings back from the device)."""
        if not self.enabled:
            return
        row = {"frames": frames, "wall_time": round(self.wall_offset + time.perf_counter() - self.start, 3),
               "cpu_time": round(self.cpu_offset + time.process_time() - self.start_cpu, 3),
               "fps": round(self.fps(frames), 1), **{k: float(v) for k, v in scalars.items()}}
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
