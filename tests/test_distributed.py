"""Every trainer under torchrun with two CPU processes (gloo), as on K GPUs with NCCL."""
import subprocess
import sys
from pathlib import Path

import pytest
import torch

CHILD = Path(__file__).resolve().parent / "dist_child.py"
REPO = CHILD.parent.parent

# Small runs on Pong: 2 envs per rank; enough frames for a few gradient steps per trainer.
TRAINERS = {
    "ppo": ["--num-steps", "8", "--update-epochs", "1", "--num-minibatches", "2", "--total-frames", "256"],
    "a2c_vtrace": ["--num-batches", "1", "--num-steps", "5", "--total-frames", "240"],
    "rainbow": ["--batch-size", "8", "--learning-starts", "16", "--n-step", "3", "--buffer-size", "64",
                "--total-frames", "320"],
}


def launch(trainer: str, record: Path, out: Path, extra: list[str], nproc: int = 2, num_envs: int = 4) -> list[dict]:
    args = ["--game", "pong", "--device", "cpu", "--num-envs", str(num_envs), "--seed", "3", "--quiet",
            "--num-threads", "1", "--checkpoint-every", "1", "--output-dir", str(out), *TRAINERS[trainer], *extra]
    prefix = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"] \
        if nproc > 1 else [sys.executable]
    done = subprocess.run([*prefix, str(CHILD), trainer, str(record), "--", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [torch.load(record / f"rank{r}.pt", weights_only=False) for r in range(nproc)]


@pytest.mark.parametrize("trainer", list(TRAINERS))
def test_two_ranks_share_weights_not_trajectories_and_checkpoint_once(trainer, tmp_path):
    out = tmp_path / "run"
    r0, r1 = launch(trainer, tmp_path / "first", out, [])
    for name, w in r0["weights"].items():
        assert torch.equal(r0["initial"][name], r1["initial"][name]), f"{trainer}: {name} starts apart"
        assert torch.equal(w, r1["weights"][name]), f"{trainer}: {name} differs between ranks"
    assert any(not torch.equal(w, r0["initial"][k]) for k, w in r0["weights"].items()), "no update happened"
    assert r0["observed"] != r1["observed"], "both ranks stepped the same envs"
    assert len(r0["observed"]) == len(r1["observed"]) > 0
    assert r0["writes"] >= 1 and r1["writes"] == 0, "only rank 0 writes checkpoints"
    assert sorted(p.name for p in out.iterdir() if p.name.startswith("checkpoint")) == ["checkpoint.pt"]
    frames = r0["result"]["frames"]
    assert frames == r1["result"]["frames"] and frames > 0  # all ranks' frames, counted alike on each

    # --resume continues from rank 0's checkpoint on both ranks, with the counters.
    more = str(2 * int(TRAINERS[trainer][TRAINERS[trainer].index("--total-frames") + 1]))
    r0b, r1b = launch(trainer, tmp_path / "resumed", out, ["--resume", "--total-frames", more])
    assert r0b["result"]["frames"] == r1b["result"]["frames"] > frames
    assert r0b["result"]["update"] > r0["result"]["update"]
    for name, w in r0b["weights"].items():
        assert torch.equal(w, r1b["weights"][name])
    # a resumed run steps fewer times than a fresh one of the same length
    assert len(r0b["observed"]) < 2 * len(r0["observed"]) + 2


def test_two_ranks_of_b_envs_update_as_one_process_of_2b(tmp_path):
    """A2C+V-trace: same seeds, same actions (sampled per global env id), gradients averaged over ranks."""
    extra = ["--total-frames", "240"]  # 3 updates of 2 x 2 envs x 5 steps x 4 frames: 2 gradient steps
    two = launch("a2c_vtrace", tmp_path / "two", tmp_path / "run2", extra, nproc=2, num_envs=4)
    one = launch("a2c_vtrace", tmp_path / "one", tmp_path / "run1", extra, nproc=1, num_envs=4)[0]
    assert two[0]["result"]["frames"] == one["result"]["frames"]
    # rank r's envs are envs [2r, 2r+2) of the single process, step by step (exact sums of pixels)
    assert [a + b for a, b in zip(two[0]["observed"], two[1]["observed"])] == one["observed"]
    assert two[0]["observed"] != two[1]["observed"]
    moved = 0.0
    for name, w in one["weights"].items():
        torch.testing.assert_close(two[0]["weights"][name], w, rtol=1e-5, atol=1e-6, msg=name)
        moved = max(moved, float((w - one["initial"][name]).abs().max()))
    assert moved > 1e-4, "the updates did not move the weights"
