"""Evaluation with the usual Atari protocol, an optional video, and learning curves from log.csv.

Protocol (Machado et al. 2018 / ALE v5): sticky actions 0.25, or 30 random
no-ops at the start without sticky actions (`noops=True`, Mnih et al. 2015);
episodes capped at 108,000 frames; the score is the game's unclipped return.
"""
from __future__ import annotations

import csv
from pathlib import Path

import torch
from torch.distributions import Categorical


@torch.no_grad()
def evaluate(model: torch.nn.Module, game: str, episodes: int = 10, device: str = "cpu", seed: int = 12345,
             noops: bool = False, greedy: bool = False, video: str | Path | None = None,
             max_frames: int = 108_000, act=None) -> list[float]:
    """Scores of `episodes` episodes, played in parallel (one environment each).

    `act`: obs [N, 4, 84, 84] -> actions [N] (a Q-network's policy); by default the actor-critic's
    policy is sampled (its argmax with `greedy`).

    With `video`, the first environment's RGB frames are written as an
    animated GIF there (Pillow).
    """
    import cule

    env = cule.AtariVectorEnv(game, episodes, device=device, reward_clipping=False, max_num_frames_per_episode=max_frames,
                              repeat_action_probability=0.0 if noops else 0.25, noop_max=30 if noops else 0)
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


def plot_curve(output_dir: str | Path, png: str | Path | None = None, title: str = "") -> Path:
    """episode_return against frames and wall time from output_dir/log.csv, as a PNG (matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in csv.DictReader(open(Path(output_dir) / "log.csv")) if r.get("episode_return") not in ("nan", "")]
    frames = [float(r["frames"]) / 1e6 for r in rows]
    minutes = [float(r["wall_time"]) / 60 for r in rows]
    score = [float(r["episode_return"]) for r in rows]
    smooth = rolling_mean(score, SMOOTHING)
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
    for axis, x in ((a, frames), (b, minutes)):
        axis.plot(x, score, color="tab:blue", alpha=0.3, linewidth=0.8, label="per log line")
        axis.plot(x, smooth, color="tab:blue", linewidth=1.8, label=f"mean of {SMOOTHING} lines")
    a.set_xlabel("emulator frames (M)")
    a.set_ylabel("mean episode return")
    a.legend(loc="upper left", fontsize=8)
    b.set_xlabel("wall time (min)")
    fig.suptitle(title)
    fig.tight_layout()
    png = Path(png or Path(output_dir) / "curve.png")
    fig.savefig(png, dpi=110)
    return png
