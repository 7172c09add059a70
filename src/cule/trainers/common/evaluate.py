"""Evaluation with the usual Atari protocol, an optional video, and learning curves from log.csv.

Protocol (Machado et al. 2018 / ALE v5): sticky actions 0.25, or 30 random
no-ops at the start without sticky actions (`noops=True`, Mnih et al. 2015);
episodes capped at 108,000 frames; the score is the game's unclipped return.
"""
from __future__ import annotations

import csv
import math
from pathlib import Path

import torch
from torch.distributions import Categorical


EVAL_SEED = 12345  # the seed of the evaluation's environments unless a caller gives another


@torch.no_grad()
def evaluate(model: torch.nn.Module, game: str, episodes: int = 10, device: str = "cpu",
             seed: int = EVAL_SEED, noops: bool = False, greedy: bool = False, video: str | Path | None = None,
             max_frames: int = 108_000, act=None, full_action_space: bool = False) -> list[float]:
    """Scores of `episodes` episodes, played in parallel (one environment each).

    `act`: obs [N, 4, 84, 84] -> actions [N] (a Q-network's policy); by default the actor-critic's
    policy is sampled (its argmax with `greedy`).

    With `video`, the first environment's RGB frames are written as an
    animated GIF there (Pillow). `full_action_space`: ALE's 18 actions, as a
    multi-task agent (trained on a mixed batch) acts.
    """
    import cule

    env = cule.AtariVectorEnv(game, episodes, device=device, reward_clipping=False, max_num_frames_per_episode=max_frames,
                              repeat_action_probability=0.0 if noops else 0.25, noop_max=30 if noops else 0,
                              full_action_space=full_action_space)
    obs, _ = env.reset(seed=seed)
    returns = torch.zeros(episodes, device=device)
    running = torch.ones(episodes, dtype=torch.bool, device=device)
    frames = []
    while bool(running.any()):
        if act is not None:
            action = act(obs)
        else:
            logits, _ = model(obs)
            action = logits.argmax(-1) if greedy else Categorical(logits=logits).sample()
        obs, reward, terminated, truncated, _ = env.step(action)
        returns += reward.float() * running
        running &= ~(terminated | truncated)
        if video is not None and bool(running[0]):
            frames.append(env.get_screen_rgb()[0].cpu().numpy())
    env.close()
    if video is not None and frames:
        from PIL import Image

        images = [Image.fromarray(f) for f in frames[::2]]
        images[0].save(video, save_all=True, append_images=images[1:], duration=66, loop=0)
    return returns.tolist()


SMOOTHING = 20  # log lines averaged by the curve's bold line


def rolling_mean(values: list[float], window: int) -> list[float]:
    """Mean of each value and the up to window - 1 before it."""
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _column(rows: list[dict], name: str, x: str = "frames") -> tuple[list[float], list[float]]:
    """(x in millions of frames or minutes, values) of a log.csv column, over the rows where it has a value."""
    kept = [r for r in rows if r.get(name) not in (None, "", "nan")]
    scale = 1e6 if x == "frames" else 60
    return [float(r[x]) / scale for r in kept], [float(r[name]) for r in kept]


def _plot_smoothed(axis, x: list[float], values: list[float], color: str = "tab:blue", label: str = "") -> None:
    """Each log line faintly, and the mean of SMOOTHING lines in bold."""
    axis.plot(x, values, color=color, alpha=0.3, linewidth=0.8, label=f"{label}per log line")
    axis.plot(x, rolling_mean(values, SMOOTHING), color=color, linewidth=1.8, label=f"{label}mean of {SMOOTHING} lines")


def _save(fig, title: str, png: str | Path) -> Path:
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    _pyplot().close(fig)
    return Path(png)


def plot_curve(output_dir: str | Path, png: str | Path | None = None, title: str = "",
               target: float | None = None) -> Path:
    """episode_return against frames and wall time from output_dir/log.csv, as a PNG (matplotlib), and the
    tests' mean scores from output_dir/tests.csv when the run has them; `target`: a dashed line at that score."""
    plt = _pyplot()
    rows = list(csv.DictReader(open(Path(output_dir) / "log.csv")))
    tests = Path(output_dir) / "tests.csv"
    tests = list(csv.DictReader(open(tests))) if tests.exists() else []
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
    for axis, x in ((a, "frames"), (b, "wall_time")):
        _plot_smoothed(axis, *_column(rows, "episode_return", x))
        if tests:
            axis.plot(*_column(tests, "score", x), "o-", color="tab:orange", markersize=3, linewidth=1,
                      label=f"test ({int(float(tests[-1]['episodes']))} episodes)")
        if target is not None:
            axis.axhline(target, color="grey", linestyle="--", linewidth=0.8)
    a.set_xlabel("emulator frames (M)")
    a.set_ylabel("mean episode return")
    a.legend(loc="upper left", fontsize=8)
    b.set_xlabel("wall time (min)")
    return _save(fig, title, png or Path(output_dir) / "curve.png")


def plot_games(output_dir: str | Path, png: str | Path | None = None, title: str = "") -> Path:
    """A multi-task run's curves from output_dir/log.csv as a PNG: each game's mean episode return
    (``return/<game>``) in a panel of its own, as the games' scales differ, and the mean and median
    human-normalised scores over the games in the last."""
    plt = _pyplot()
    rows = list(csv.DictReader(open(Path(output_dir) / "log.csv")))
    games = [name[len("return/"):] for name in rows[0] if name.startswith("return/")] if rows else []
    if not games:
        raise ValueError(f"{output_dir}/log.csv has no per-game returns")
    cols = math.ceil(math.sqrt(len(games) + 1))
    rows_of_panels = math.ceil((len(games) + 1) / cols)
    fig, axes = plt.subplots(rows_of_panels, cols, figsize=(3.2 * cols, 2.5 * rows_of_panels), squeeze=False)
    panels = list(axes.flat)
    for axis, game in zip(panels, games):
        _plot_smoothed(axis, *_column(rows, f"return/{game}"))
        axis.set_title(game, fontsize=9)
    last = panels[len(games)]
    for name, color in (("hns_mean", "tab:orange"), ("hns_median", "tab:green")):
        _plot_smoothed(last, *_column(rows, name), color=color, label=f"{name[4:]}: ")
    last.set_title("human-normalised score (%)", fontsize=9)
    last.legend(fontsize=6)
    for axis in panels[len(games) + 1:]:
        axis.set_visible(False)
    for axis in panels[-cols:]:
        axis.set_xlabel("emulator frames (M)", fontsize=8)
    return _save(fig, title, png or Path(output_dir) / "curve.png")
