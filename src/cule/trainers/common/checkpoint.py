"""Checkpoints written atomically (a kill -9 mid-write leaves the previous one intact) and found again on --resume."""
from __future__ import annotations

import os
from pathlib import Path

import torch

NAME = "checkpoint.pt"


def save(output_dir: str | Path, state: dict) -> Path:
    """torch.save to a temporary file in the same folder, fsync, then rename over the old checkpoint."""
    path = Path(output_dir) / NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def load(output_dir: str | Path, map_location="cpu") -> dict | None:
    """The last checkpoint in output_dir, or None if there is none."""
    path = Path(output_dir) / NAME
    return torch.load(path, map_location=map_location, weights_only=False) if path.exists() else None
