"""Trainers: learning a sanity task, a smoke run on a real game, checkpoints and --resume."""
import csv
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from cule.trainers.common import checkpoint
from cule.trainers.ppo import Args, train

REPO = Path(__file__).resolve().parent.parent


def test_ppo_learns_the_sanity_task(tmp_path):
    """Chance is 0.5; reading the pixels gives 1."""
    torch.set_num_threads(2)
    r = train(Args(game="sanity", num_envs=32, num_steps=8, total_frames=4096, output_dir=str(tmp_path), quiet=True))
    assert r["recent_returns"][0] < 0.8, "should start near chance"
    assert sum(r["recent_returns"][-3:]) / 3 > 0.95, r["recent_returns"]


def test_ppo_smoke_run_on_pong(tmp_path):
    """2,000 agent steps (4 environments x 500) on Pong, with checkpoints and logs written."""
    r = train(Args(game="pong", num_envs=4, num_steps=50, total_frames=4 * 500 * 4, output_dir=str(tmp_path),
                   quiet=True, num_threads=2, checkpoint_every=5))
    assert r["update"] == 10 and r["frames"] == 8000
    state = checkpoint.load(tmp_path)
    assert state["update"] == 10 and state["frames"] == 8000
    assert torch.isfinite(torch.tensor(r["loss"]))


def test_ppo_help_lists_every_argument():
    out = subprocess.run([sys.executable, "-m", "cule.trainers.ppo", "--help"], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0
    for flag in ("--game", "--num-envs", "--total-frames", "--device", "--seed", "--output-dir", "--resume"):
        assert flag in out.stdout


def test_ppo_resumes_after_kill_9(tmp_path):
    """A run killed with SIGKILL continues from its last checkpoint with its counters."""
    cmd = [sys.executable, "-m", "cule.trainers.ppo", "--game", "sanity", "--num-envs", "16", "--num-steps", "4",
           "--total-frames", "100000", "--output-dir", str(tmp_path), "--checkpoint-every", "2", "--quiet"]
    proc = subprocess.Popen(cmd, cwd=REPO)
    deadline = time.time() + 120
    while checkpoint.load(tmp_path) is None or checkpoint.load(tmp_path)["update"] < 4:
        assert time.time() < deadline, "no checkpoint written"
        time.sleep(0.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    saved = checkpoint.load(tmp_path)
    assert saved["frames"] == saved["update"] * 16 * 4
    r = train(Args(game="sanity", num_envs=16, num_steps=4, total_frames=saved["frames"] + 4 * 16 * 4,
                   output_dir=str(tmp_path), resume=True, quiet=True))
    assert r["update"] == saved["update"] + 4 and r["frames"] == saved["frames"] + 4 * 16 * 4


@pytest.mark.parametrize("lockstep", [False, True], ids=["in_turns", "lockstep"])
def test_a2c_vtrace_learns_the_sanity_task(tmp_path, lockstep):
    from cule.trainers.a2c_vtrace import Args as A2CArgs, train as train_a2c

    torch.set_num_threads(2)
    r = train_a2c(A2CArgs(game="sanity", num_envs=32, num_batches=2, num_steps=4 if lockstep else 5,
                          lockstep=lockstep, total_frames=32 * 5 * 30, output_dir=str(tmp_path), quiet=True))
    assert r["recent_returns"][0] < 0.8, "should start near chance"
    assert sum(r["recent_returns"][-3:]) / 3 > 0.95, r["recent_returns"]
    # The logged entropy has fallen well below a coin flip's (ln 2 = 0.69): the policy reads the pixels.
    assert 0 <= r["entropy"] < 0.35 and r["value_loss"] > 0, r


def test_a2c_vtrace_with_cules_optimizer_and_normalised_frames_learns_the_sanity_task(tmp_path):
    """RMSprop and per-pixel normalised frames (CuLE's A2C+V-trace settings) in lockstep; the statistics the
    checkpoint keeps are those of the frames acted on."""
    from cule.trainers.a2c_vtrace import Args as A2CArgs, train as train_a2c

    torch.set_num_threads(2)
    r = train_a2c(A2CArgs(game="sanity", num_envs=32, num_batches=2, num_steps=4, lockstep=True,
                          total_frames=32 * 4 * 30, output_dir=str(tmp_path), quiet=True, optimizer="rmsprop",
                          learning_rate=6.5e-4, normalize_obs=True))
    assert sum(r["recent_returns"][-3:]) / 3 > 0.95, r["recent_returns"]
    state = checkpoint.load(tmp_path)
    assert "square_avg" in next(iter(state["optimizer"]["state"].values()))  # RMSprop's, not Adam's
    stack = 32 * 4  # frames per act: environments x the stack
    assert state["model"]["obs_norm.count"].item() == pytest.approx(stack * r["frames"] // 32 + 1e-4)


def test_start_steps_stagger_the_episodes(tmp_path):
    """Each environment's episode starts at its own drawn step: its episode frame count afterwards is frameskip x
    the steps since then, plus its reset's random no-ops (up to 30 frames); the return it reports for each is
    the episode's score so far, as Pong's RAM holds it (player's points, address 14, less the computer's, 13)."""
    import cule
    from cule.trainers.a2c_vtrace import Args as A2CArgs, stagger_episodes, train as train_a2c

    steps, n = 400, 6
    env = cule.AtariVectorEnv("pong", n, reward_clipping=False)
    obs, returns = stagger_episodes(env, env.reset(seed=1)[0], steps, 6, seed=5)
    ram = env.get_ram().cpu().long()
    assert returns.tolist() == (ram[:, 14] - ram[:, 13]).tolist()
    assert returns.min() < 0  # points were lost since some restarts (random play: about one in 40 steps)
    frames = env.step(torch.zeros(n, dtype=torch.long))[4]["episode_frame_number"].cpu()
    restart = torch.randint(0, steps, (n,), generator=torch.Generator().manual_seed(5))
    extra = frames - 4 * (steps - restart)
    assert obs.shape == (n, 4, 84, 84) and bool(((extra >= 0) & (extra <= 30)).all()), (restart, frames)
    assert len(set(restart.tolist())) > 1
    with pytest.raises(ValueError, match="--start-steps"):
        train_a2c(A2CArgs(game="pong", num_envs=4, num_batches=2, start_steps=10, total_frames=80,
                          output_dir=str(tmp_path), quiet=True))


def test_obs_norm_matches_the_mean_and_variance_of_every_frame_seen():
    from cule.trainers.common.models import ObsNorm

    g = torch.Generator().manual_seed(0)
    batches = [torch.randint(0, 256, (n, 4, 6, 5), generator=g, dtype=torch.uint8) for n in (3, 8, 1)]
    norm = ObsNorm(6, 5)
    for b in batches:
        norm.update(b)
    every = torch.cat([b.reshape(-1, 6, 5) for b in batches]).double()
    # the prior (mean 0, variance 1, weight 1e-4) moves the figures by about 1e-4 of their size
    assert torch.allclose(norm.mean.double(), every.mean(0), rtol=1e-4)
    assert torch.allclose(norm.var.double(), every.var(0, unbiased=False), rtol=1e-3)
    x = batches[0]
    assert torch.allclose(norm(x), (x.float() - norm.mean) / torch.sqrt(norm.var + 1e-8))


@pytest.mark.parametrize("game, frameskip", [("sanity", 1), ("breakout", 4)])
def test_a2c_vtrace_lockstep_trains_each_batch_on_its_own_last_steps(tmp_path, monkeypatch, game, frameskip):
    """Every env steps at every step; update j trains batch j % num_batches on the num_steps steps that end with
    that update's, exactly as an independent record of every step has them (the sanity task: a reward and an
    episode end at every step)."""
    from cule.trainers import a2c_vtrace
    from cule.trainers.common.envs import make_env

    record = dict(obs=[], actions=[], rewards=[], dones=[])

    class Recording:  # the env as the trainer sees it, every step copied aside
        def __init__(self, env):
            self.env = env

        def __getattr__(self, name):
            return getattr(self.env, name)

        def reset(self, **kwargs):
            obs, info = self.env.reset(**kwargs)
            record["obs"].append(obs.clone())
            return obs, info

        def step(self, actions):
            obs, reward, terminated, truncated, info = self.env.step(actions)
            record["actions"].append(actions.clone())
            record["rewards"].append(reward.clone())
            record["dones"].append((terminated | truncated).clone())
            record["obs"].append(obs.clone())
            return obs, reward, terminated, truncated, info

    windows = []

    def keeping(model, ro, args):
        windows.append(ro)
        return vtrace_loss(model, ro, args)

    vtrace_loss = a2c_vtrace.vtrace_loss
    monkeypatch.setattr(a2c_vtrace, "make_env", lambda *a, **k: Recording(make_env(*a, **k)))
    monkeypatch.setattr(a2c_vtrace, "vtrace_loss", keeping)
    envs, nb, T = 6, 3, 6  # batches of 2 envs, an update every 2 steps
    updates = 11
    a2c_vtrace.train(a2c_vtrace.Args(game=game, num_envs=envs, num_batches=nb, num_steps=T, lockstep=True,
                                     total_frames=envs * 2 * frameskip * updates, output_dir=str(tmp_path), quiet=True,
                                     num_threads=1))
    spu, B = T // nb, envs // nb
    assert len(record["actions"]) == updates * spu
    trained = [j for j in range(updates) if (j + 1) * spu >= T]
    assert len(windows) == len(trained) == updates - nb + 1
    for j, ro in zip(trained, windows):
        end, k = (j + 1) * spu, j % nb
        envs_k = slice(k * B, (k + 1) * B)
        assert torch.equal(ro.obs, torch.stack(record["obs"][end - T:end + 1])[:, envs_k])
        assert torch.equal(ro.actions, torch.stack(record["actions"][end - T:end])[:, envs_k])
        assert torch.equal(ro.rewards, torch.stack(record["rewards"][end - T:end])[:, envs_k].float().sign())
        assert torch.equal(ro.dones, torch.stack(record["dones"][end - T:end])[:, envs_k])
        assert torch.isfinite(ro.behaviour_logp).all() and (ro.behaviour_logp <= 0).all()


def test_a2c_vtrace_lockstep_needs_whole_steps_per_update(tmp_path):
    from cule.trainers.a2c_vtrace import Args as A2CArgs, train as train_a2c

    with pytest.raises(ValueError, match="--num-steps \\(6\\) must be a multiple of --num-batches"):
        train_a2c(A2CArgs(game="sanity", num_envs=8, num_batches=4, num_steps=6, lockstep=True,
                          output_dir=str(tmp_path), quiet=True))


def test_a2c_vtrace_smoke_run_on_breakout_and_resume(tmp_path):
    """2,000 agent steps (2 batches of 2 environments x 500) on Breakout, then a resumed run continues."""
    from cule.trainers.a2c_vtrace import Args as A2CArgs, train as train_a2c

    common = dict(game="breakout", num_envs=4, num_batches=2, num_steps=20, output_dir=str(tmp_path), quiet=True,
                  num_threads=2, checkpoint_every=5)
    r = train_a2c(A2CArgs(total_frames=2000 * 4, **common))
    assert r["frames"] == 2000 * 4 and checkpoint.load(tmp_path)["update"] == 50
    r = train_a2c(A2CArgs(total_frames=2400 * 4, resume=True, **common))
    assert r["frames"] == 2400 * 4 and checkpoint.load(tmp_path)["update"] == 60


def test_a2c_vtrace_help_lists_every_argument():
    out = subprocess.run([sys.executable, "-m", "cule.trainers.a2c_vtrace", "--help"], capture_output=True, text=True,
                         cwd=REPO)
    assert out.returncode == 0
    for flag in ("--game", "--num-envs", "--num-batches", "--num-steps", "--total-frames", "--resume"):
        assert flag in out.stdout


def test_evaluation_protocol_and_video(tmp_path):
    """Evaluation plays whole episodes with sticky actions 0.25 and the frame cap, and can write a GIF."""
    from cule.trainers.common.evaluate import evaluate
    from cule.trainers.common.models import NatureCNN

    scores = evaluate(NatureCNN(4, 6), "pong", episodes=2, max_frames=1200, video=tmp_path / "agent.gif")
    assert len(scores) == 2 and all(-21 <= s <= 21 for s in scores)
    assert (tmp_path / "agent.gif").stat().st_size > 1000


@pytest.mark.parametrize("name", ["impala", "data-efficient"])
def test_network_option_trains(tmp_path, name):
    r = train(Args(game="sanity", num_envs=16, num_steps=4, total_frames=16 * 4 * 3, output_dir=str(tmp_path),
                   quiet=True, network=name))
    assert r["update"] == 3 and torch.isfinite(torch.tensor(r["loss"]))
    with pytest.raises(ValueError, match="network"):
        train(Args(game="sanity", num_envs=4, num_steps=2, total_frames=8, output_dir=str(tmp_path), quiet=True,
                   network="resnet9000"))


def test_data_efficient_torso_has_the_papers_shape():
    """Two 5x5 convolutions of stride 5 take 84x84 to 3x3x64 = 576 features (van Hasselt et al. 2019)."""
    from cule.trainers.common.models import data_efficient_torso

    torso = data_efficient_torso(4)
    assert torso(torch.zeros(2, 4, 84, 84)).shape == (2, 576)
    assert sum(p.numel() for p in torso.parameters()) == (4 * 25 * 32 + 32) + (32 * 25 * 64 + 64)


def test_wall_clock_budget_stops_with_a_checkpoint(tmp_path):
    from cule.trainers.a2c_vtrace import Args as A2CArgs, train as train_a2c

    t0 = time.perf_counter()
    r = train_a2c(A2CArgs(game="sanity", num_envs=8, num_batches=2, num_steps=4, total_frames=10**9,
                          output_dir=str(tmp_path), quiet=True, max_minutes=0.05))
    assert time.perf_counter() - t0 < 60
    saved = checkpoint.load(tmp_path)
    assert saved["update"] == r["update"] and saved["frames"] == r["frames"] == r["update"] * 4 * 4


def test_resumed_log_continues_from_the_checkpoint(tmp_path):
    """A resumed run's log keeps the rows up to the checkpoint's frames and continues their wall clock;
    a fresh run into the same folder starts a new log."""
    from cule.trainers.common.evaluate import rolling_mean
    from cule.trainers.common.logger import Logger

    (tmp_path / "log.csv").write_text("frames,wall_time,fps,episode_return\n10,5.0,2.0,-21\n20,9.0,2.2,-21\n"
                                      "30,14.0,2.1,-20\n")  # killed after a checkpoint at 20 frames
    resumed = Logger(tmp_path, 100, start_frames=20)
    assert resumed.wall_offset == 9.0 and resumed.cpu_offset == 0.0  # a log without the CPU-time column
    resumed.log(40, episode_return=-19)
    resumed.close()
    rows = list(csv.DictReader(open(tmp_path / "log.csv")))
    assert [int(r["frames"]) for r in rows] == [10, 20, 40]
    assert list(rows[-1]) == ["frames", "wall_time", "fps", "episode_return"]  # the log's own columns kept
    fresh = Logger(tmp_path / "new", 100)
    fresh.log(10, episode_return=-21)
    fresh.close()
    again = Logger(tmp_path / "new", 100, start_frames=10)
    assert again.cpu_offset == float(next(csv.DictReader(open(tmp_path / "new" / "log.csv")))["cpu_time"])
    assert 9.0 <= float(rows[2]["wall_time"]) < 60
    Logger(tmp_path, 100).close()
    assert list(csv.DictReader(open(tmp_path / "log.csv"))) == []
    # a run evaluated at the end of each of its stops (10, then 20), resumed at 20: the evaluation of the agent it
    # resumes goes, as eval.json's will when the resumed run evaluates its own; the one at 10 stays
    (tmp_path / "log.csv").write_text("frames,wall_time,fps,episode_return,eval_return\n10,5.0,2.0,-21,\n"
                                      "10,5.0,2.0,,-20.5\n20,9.0,2.2,-21,\n20,9.0,2.2,,-19.5\n")
    Logger(tmp_path, 100, start_frames=20).close()
    rows = list(csv.DictReader(open(tmp_path / "log.csv")))
    assert [(r["frames"], r["eval_return"]) for r in rows] == [("10", ""), ("10", "-20.5"), ("20", "")]
    assert rolling_mean([1.0, 3.0, 5.0, 7.0], 2) == [1.0, 2.0, 4.0, 6.0]


@pytest.mark.parametrize("trainer", ["ppo", "a2c_vtrace", "rainbow"])
@pytest.mark.parametrize("autoreset", ["NextStep", "SameStep"])
def test_trainers_read_the_env_contract(tmp_path, monkeypatch, trainer, autoreset):
    """Observation shape, action count, frameskip and reset semantics come from the env: a 3-frame 42x50
    observation, the full action set, frameskip 2, either autoreset mode."""
    import importlib

    import cule
    from cule.trainers.common.envs import EnvContract

    module = importlib.import_module(f"cule.trainers.{trainer}")
    made = []

    def make_env(game, num_envs, device, seed, num_threads=0, reset_mode="ale"):
        made.append(cule.AtariVectorEnv(game, num_envs, device=device, num_threads=num_threads, stack_num=3,
                                        img_height=42, img_width=50, full_action_space=True, frameskip=2,
                                        autoreset_mode=autoreset, reward_clipping=False, reset_mode=reset_mode))
        return made[-1]

    monkeypatch.setattr(module, "make_env", make_env)
    extra = dict(learning_starts=8, batch_size=8, buffer_size=256) if trainer == "rainbow" else {}
    if trainer == "a2c_vtrace":
        extra = dict(num_batches=2, num_steps=4)
    elif trainer == "ppo":
        extra = dict(num_steps=4)
    r = module.train(module.Args(game="breakout", num_envs=4, total_frames=4 * 2 * 4 * 6, output_dir=str(tmp_path),
                                 quiet=True, num_threads=2, **extra))
    contract = EnvContract.of(made[0])
    assert contract == EnvContract((3, 42, 50), 18, 2, autoreset == "SameStep")
    assert r["frames"] > 0 and r["frames"] % (4 * contract.frameskip) == 0
    model = r["model"]
    obs = torch.zeros((2, *contract.obs_shape), dtype=torch.uint8)
    out = model(obs)[0]
    assert out.shape == (2, 18)


def test_the_log_clocks_leave_suspended_time_out_and_a_resume_keeps_the_tests_until_its_checkpoint(tmp_path):
    from cule.trainers.common.logger import Logger

    log = Logger(tmp_path, 100)
    with log.suspended():
        time.sleep(0.3)
    log.log(10, episode_return=-21)
    log.test(10, score=-20.0, episodes=1)
    log.test(20, score=-19.0, episodes=1)
    log.test(30, score=-18.0, episodes=1)
    log.close()
    row = next(csv.DictReader(open(tmp_path / "log.csv")))
    assert float(row["wall_time"]) < 0.3 and float(row["fps"]) > 10 / 0.3
    Logger(tmp_path, 100, start_frames=20).close()  # a resume from the checkpoint at 20 frames
    assert [r["frames"] for r in csv.DictReader(open(tmp_path / "tests.csv"))] == ["10", "20"]
    Logger(tmp_path, 100).close()  # a fresh run in the same folder
    assert not (tmp_path / "tests.csv").exists()


def test_one_agent_on_several_games_is_tested_on_each(tmp_path, monkeypatch):
    """--test-every with several games: each game's mean and the human-normalised mean and median, a row per
    test; --quiet writes no log, so it plays no tests either."""
    from cule.trainers.common import evaluate as evaluation

    real, played = evaluation.evaluate, []

    def short(model, game, *args, **kwargs):
        played.append(game)
        return real(model, game, *args, **{**kwargs, "max_frames": 400})

    monkeypatch.setattr("cule.trainers.common.run.evaluate", short)
    args = dict(game="pong,breakout", num_envs=4, num_steps=16, total_frames=512, test_every=256, test_episodes=1)
    train(Args(**args, output_dir=str(tmp_path)))
    rows = list(csv.DictReader(open(tmp_path / "tests.csv")))
    assert [r["frames"] for r in rows] == ["256", "512"] and played == ["pong", "breakout"] * 2
    assert {"return/pong", "return/breakout", "hns_mean", "hns_median"} <= set(rows[0])
    played.clear()
    train(Args(**args, output_dir=str(tmp_path / "quiet"), quiet=True))
    assert played == [] and not (tmp_path / "quiet" / "tests.csv").exists()


@pytest.mark.parametrize("module,flags,message", [
    ("ppo", ["--num-steps", "0"], "--num-steps must be at least 1, got 0"),
    ("ppo", ["--num-minibatches", "0"], "--num-minibatches must be at least 1"),
    ("a2c_vtrace", ["--num-envs", "-1"], "--num-envs must be at least 1, got -1"),
    ("rainbow", ["--n-step", "0"], "--n-step must be at least 1"),
    ("rainbow", ["--atoms", "0"], "--atoms must be at least 1"),
    ("rainbow", ["--v-min", "10", "--v-max", "-10"], "--v-min \\(10.0\\) must be below --v-max"),
    ("ppo_jax", ["--num-minibatches", "0"], "--num-minibatches must be at least 1"),
    ("ppo", ["--game", "pongg"], "^usage: python -m cule.trainers.ppo .*Unknown game 'pongg'. Did you mean 'pong'"),
    ("a2c_vtrace", ["--game", "pong,brekout"], "Unknown game 'brekout'. Did you mean 'breakout'"),
    ("rainbow", ["--game", "/no/such/rom.bin"], "ROM file '/no/such/rom.bin' does not exist"),
    ("ppo_jax", ["--game", "pongg"], "Unknown game 'pongg'"),
    ("rainbow", ["--device", "tpu"], "device must be 'cpu' or 'cuda\\[:N\\]', got 'tpu'"),
    ("ppo", ["--schedule-frames", "-1"], "--schedule-frames must be at least 0"),
    ("ppo", ["--network", "resnet"], "argument --network: invalid choice: 'resnet'"),
    ("rainbow", ["--optimizer", "sgd"], "argument --optimizer: invalid choice: 'sgd'"),
    ("a2c_vtrace", ["--reset-mode", "fast"], "argument --reset-mode: invalid choice: 'fast'"),
    ("a2c_vtrace", ["--num-envs", "6"], "--num-envs \\(6\\) must be a multiple of --num-batches \\(4\\)"),
    ("a2c_vtrace", ["--start-steps", "10"], "--start-steps \\(10\\) staggers the episodes of --lockstep"),
    ("ppo", ["--test-episodes", "0"], "--test-episodes must be at least 1, got 0"),
    ("ppo", ["--checkpoint-every", "0"], "--checkpoint-every must be at least 1, got 0"),
    ("rainbow", ["--log-every", "0"], "--log-every must be at least 1, got 0"),
    ("rainbow", ["--target-update-every", "0"], "--target-update-every must be at least 1, got 0"),
    ("rainbow", ["--env-steps-per-update", "0"], "--env-steps-per-update must be above 0, got 0.0"),
] + ([("a2c_vtrace", ["--device", "cuda"], "device 'cuda' needs a CUDA GPU")] if not torch.cuda.is_available() else []))
def test_bad_arguments_stop_before_the_run_with_one_line(module, flags, message, tmp_path, capsys):
    import importlib

    from cule.trainers.common.args import parse
    if module == "ppo_jax":
        pytest.importorskip("jax")
    with pytest.raises(SystemExit) as stop:
        parse(importlib.import_module(f"cule.trainers.{module}").Args, [*flags, "--output-dir", str(tmp_path)])
    assert stop.value.code == 2
    assert re.search(message, capsys.readouterr().err, re.S)
    assert not any(tmp_path.iterdir())  # nothing ran


def test_a_new_run_over_an_old_one_says_it_replaces_it(tmp_path):
    cmd = [sys.executable, "-m", "cule.trainers.ppo", "--game", "sanity", "--num-envs", "8", "--num-steps", "4",
           "--total-frames", "64", "--output-dir", str(tmp_path)]
    first = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert first.returncode == 0 and "replaces" not in first.stderr
    second = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert second.returncode == 0 and "holds a run's checkpoint: this run replaces it" in second.stderr
    # a resume already at its total says so, rather than ending without a word
    log = (tmp_path / "log.csv").read_text()
    third = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, cwd=REPO)
    assert third.returncode == 0 and "is at 64 frames, --total-frames 64: nothing to train" in third.stderr
    assert (tmp_path / "log.csv").read_text() == log


def _ppo_rows(path: Path) -> list[dict]:
    with open(path / "log.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_a_run_cut_short_trains_as_the_longer_run_of_its_schedule(tmp_path):
    """--schedule-frames apart from --total-frames: PPO's annealed learning rate, and so every loss, follow the
    long run's until the short one stops; without it the short run anneals over its own frames."""
    common = dict(game="sanity", num_envs=8, num_steps=4, seed=3, quiet=False)  # 32 frames an update
    train(Args(total_frames=32 * 6, output_dir=str(tmp_path / "long"), **common))
    train(Args(total_frames=32 * 3, schedule_frames=32 * 6, output_dir=str(tmp_path / "cut"), **common))
    train(Args(total_frames=32 * 3, output_dir=str(tmp_path / "own"), **common))
    long, cut, own = (_ppo_rows(tmp_path / name) for name in ("long", "cut", "own"))
    columns = ("frames", "loss", "value_loss", "entropy", "learning_rate")
    assert [[r[c] for c in columns] for r in cut] == [[r[c] for c in columns] for r in long[:3]]
    assert [float(r["learning_rate"]) for r in long] == [5e-4 * (1 - k / 6) for k in range(6)]
    assert [float(r["learning_rate"]) for r in own] == [5e-4 * (1 - k / 3) for k in range(3)]


def test_total_frames_0_trains_nothing(tmp_path):
    """--total-frames 0 evaluates (the checkpoint, or the new network) without a single update."""
    from cule.trainers import a2c_vtrace, rainbow

    for module in (a2c_vtrace, rainbow):
        out = tmp_path / module.__name__
        r = module.train(module.Args(game="pong", num_envs=4, total_frames=0, output_dir=str(out), quiet=True))
        assert r["frames"] == 0 and r["update"] == 0
        assert not (out / checkpoint.NAME).exists()


def _until_logged(proc: subprocess.Popen, log: Path, rows: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not (log.exists() and len(log.read_text().splitlines()) > rows):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run logged nothing"
        time.sleep(0.2)


def test_ctrl_c_stops_at_the_end_of_the_update_with_a_checkpoint_that_resumes(tmp_path):
    """The first Ctrl-C ends the run as a spent --max-minutes does: a checkpoint of the last whole update
    (checkpoints otherwise only every 10,000 updates here), status 0, and --resume goes on from it; a second
    Ctrl-C ends the process at once with status 130 and one line."""
    cmd = [sys.executable, "-m", "cule.trainers.a2c_vtrace", "--game", "sanity", "--num-envs", "8",
           "--num-batches", "2", "--num-steps", "4", "--checkpoint-every", "10000", "--total-frames", str(10**9),
           "--output-dir", str(tmp_path)]
    env = {**os.environ, "TQDM_DISABLE": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
    _until_logged(proc, tmp_path / "log.csv", 3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "Ctrl-C again stops at once" in err
    saved = torch.load(tmp_path / checkpoint.NAME, weights_only=False)
    assert saved["frames"] > 0 and saved["update"] * 16 == saved["frames"]
    assert f"stopped after {saved['frames']:,} frames" in err
    logged = [int(r["frames"]) for r in _ppo_rows(tmp_path)]
    assert max(logged) <= saved["frames"]

    resumed = subprocess.Popen([*cmd, "--resume"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=REPO, env=env)
    _until_logged(resumed, tmp_path / "log.csv", len(logged) + 2)
    resumed.send_signal(signal.SIGINT)
    time.sleep(0.05)
    resumed.send_signal(signal.SIGINT)  # as torchrun passes the terminal's on: the same press, not a second one
    _, err = resumed.communicate(timeout=60)
    assert "Traceback" not in err
    assert resumed.returncode == 0 and "stopped after" in err
    rows = [int(r["frames"]) for r in _ppo_rows(tmp_path)]
    assert rows[:len(logged)] == logged and rows[len(logged)] > saved["frames"]  # the log went on from there


def test_a_second_ctrl_c_stops_at_once_with_status_130(tmp_path):
    """During the final evaluation, after the first Ctrl-C has stopped the training."""
    cmd = [sys.executable, "-m", "cule.trainers.ppo", "--game", "pong", "--num-envs", "4", "--num-steps", "8",
           "--total-frames", str(10**9), "--eval-episodes", "5", "--output-dir", str(tmp_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            env={**os.environ, "TQDM_DISABLE": "1"})
    _until_logged(proc, tmp_path / "log.csv", 1)
    proc.send_signal(signal.SIGINT)
    deadline = time.monotonic() + 60
    while not (tmp_path / checkpoint.NAME).exists():  # the run has stopped training and begun evaluating
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    time.sleep(1.2)  # past CtrlC.SAME_PRESS_S: a press of its own
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last == f"stopped at once: {tmp_path}/{checkpoint.NAME} holds the last checkpoint written"
    assert not (tmp_path / "eval.json").exists()
