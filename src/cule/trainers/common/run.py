"""What every trainer does around its algorithm: common arguments, setup and resume, checkpoints, the
wall-clock budget, and the end of a run (evaluation, video, curve)."""
from __future__ import annotations

import contextlib
import dataclasses
import json
import random
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from cule.checks import RESET_MODES
from cule.trainers.common import checkpoint
from cule.trainers.common.args import check_games_and_device, check_fields, parse
from cule.trainers.common.distributed import Dist
from cule.trainers.common.envs import EnvContract, game_list
from cule.trainers.common.evaluate import EVAL_SEED, evaluate, plot_curve, plot_games
from cule.trainers.common.human_scores import log_scalars
from cule.trainers.common.models import NETWORKS, ObsNorm, network

OPTIMIZERS = ("adam", "rmsprop")
TEST_SEED = 54321  # test k's environments are seeded TEST_SEED + k, apart from the final evaluation's
SNAPSHOTS = "snapshots"  # output_dir's folder of the weights kept for tests run later (test_later)


# --game of the trainers that train one agent on several games at once (A2C+V-trace, PPO).
MULTI_GAME_HELP = ("ALE game id, or several comma-separated (pong,breakout,boxing) for one agent on all of them: "
                   "one mixed batch, --num-envs shared out evenly over the games, one network over ALE's full "
                   "18 actions, per-game returns and human-normalised scores in the log; 'atari57' for IMPALA's "
                   "57 games; 'sanity' for the tiny on-device check task")


@dataclass
class CommonArgs:
    """Arguments every trainer takes; a trainer's own Args adds to them (and may change a default)."""
    game: str = field(default="pong", metadata={"help": "ALE game id, or 'sanity' for the tiny on-device check task"})
    num_envs: int = field(default=256, metadata={"min": 1, "help": "environments in all (CuLE Table 4: 256)"})
    total_frames: int = field(default=10_000_000, metadata={"min": 0, "help": "raw emulator frames to train for"})
    device: str = field(default="cpu", metadata={"help": "torch device for the environments and the network"})
    seed: int = field(default=1, metadata={"help": "seed of the environments, the network and the sampling"})
    output_dir: str = field(default="runs", metadata={"help": "checkpoints, log.csv and TensorBoard logs"})
    resume: bool = field(default=False, metadata={"help": "continue from output_dir's checkpoint if there is one"})
    network: str = field(default="nature", metadata={"choices": tuple(NETWORKS),
        "help": "'nature' (Mnih et al. 2015), 'impala' (ResNet) or 'data-efficient' (two 5x5/5 convolutions, "
                "van Hasselt et al. 2019: a fifth of the learner time on a CPU)"})
    learning_rate: float = field(default=5e-4, metadata={"help": "the optimizer's learning rate (CuLE Table 4)"})
    adam_eps: float = field(default=1.5e-4, metadata={"help": "Adam epsilon (CuLE Table 4)"})
    optimizer: str = field(default="adam", metadata={"choices": OPTIMIZERS,
        "help": "'adam', or 'rmsprop' (alpha --rmsprop-alpha, epsilon --rmsprop-eps: CuLE's A2C+V-trace runs, "
                "with learning rate 6.5e-4)"})
    rmsprop_alpha: float = field(default=0.99, metadata={"help": "RMSprop's smoothing constant (CuLE: 0.99)"})
    rmsprop_eps: float = field(default=1e-5, metadata={"help": "RMSprop epsilon (CuLE: 1e-5)"})
    gamma: float = field(default=0.99, metadata={"help": "discount"})
    max_grad_norm: float = field(default=0.5, metadata={"help": "gradient clipping"})
    num_threads: int = field(default=0, metadata={"min": 0, "help": "CPU emulation threads (0: all cores)"})
    reset_mode: str = field(default="ale", metadata={"choices": RESET_MODES,
        "help": "'ale': ALE's whole reset sequence at every episode start, as ale-py; 'cache': episodes start "
                "from start states recorded at the first reset (a copy instead of ~100 emulated frames; on a GPU, "
                "where one resetting environment holds up its warp, resets otherwise cut the frame rate)"})
    checkpoint_every: int = field(default=10, metadata={"min": 1, "help": "updates between checkpoints"})
    max_minutes: float = field(default=0.0, metadata={
        "min": 0, "help": "stop (with a checkpoint) after this much wall time; 0: none"})
    eval_episodes: int = field(default=0, metadata={
        "min": 0, "help": "episodes evaluated at the end (sticky 0.25, 108k-frame cap)"})
    eval_noops: bool = field(default=False, metadata={
        "help": "evaluate with up to 30 random no-ops at the start and no sticky actions (Mnih et al. 2015) instead"})
    video: bool = field(default=False, metadata={"help": "with --eval-episodes: write output_dir/agent.gif"})
    test_every: int = field(default=0, metadata={"min": 0,
        "help": "test the agent every this many emulator frames (0: never), training suspended meanwhile: "
                "--test-episodes episodes by the final evaluation's protocol, their scores in "
                "output_dir/tests.csv against the training's frames and time (the time of the tests left out), "
                "as CuLE and the DQN papers plot test scores during training"})
    test_episodes: int = field(default=10, metadata={"min": 1, "help": "episodes of each test (--test-every)"})
    test_later: bool = field(default=False, metadata={
        "help": "with --test-every: keep the agent's weights at each test point in output_dir/snapshots/ "
                "instead of testing it then, for --test-snapshots to test afterwards on any device. On a GPU a "
                "test's few environments each step at one GPU thread's pace: a 30-episode Pong test ran past "
                "180 s on an H200, where the whole training to a score of 18 took 3.4 minutes"})
    test_snapshots: bool = field(default=False, metadata={
        "help": "at the end of the run, test the snapshots of --test-later that tests.csv lacks, each as its "
                "test would have been (same episodes and seeds, the clocks of its moment in training)"})
    quiet: bool = field(default=False, metadata={"help": "no progress bar or logs (tests)"})

    def __post_init__(self):
        check_fields(self)
        check_games_and_device([] if self.game == "sanity" else game_list(self.game), self.device)


@dataclass
class ActorCriticArgs(CommonArgs):
    """CommonArgs plus the loss weights of the actor-critic trainers (PPO, A2C)."""
    ent_coef: float = field(default=0.01, metadata={"help": "entropy bonus"})
    vf_coef: float = field(default=0.5, metadata={"help": "value loss weight"})
    normalize_obs: bool = field(default=False, metadata={
        "help": "centre and scale each pixel by the running mean and variance of the frames acted on, instead of "
                "dividing by 255 (CuLE's --normalize; one process only)"})


# Arguments that say where, how long and how visibly a run goes, not what it trains: a resumed run may change them
# (start_steps: how a process that starts or resumes staggers its episodes, A2C+V-trace's).
PER_RUN_ARGS = frozenset({"device", "output_dir", "resume", "total_frames", "max_minutes", "eval_episodes",
                          "eval_noops", "video", "quiet", "num_threads", "checkpoint_every", "log_every",
                          "start_steps", "test_every", "test_episodes", "test_later",
                          "test_snapshots"})


def resume_conflicts(args, saved: dict) -> list[str]:
    """The arguments (other than PER_RUN_ARGS) whose values differ from those a checkpoint was trained with,
    as 'name: checkpoint value, asked value'; a name that either side lacks (an older checkpoint) is not compared."""
    asked = dataclasses.asdict(args)
    return [f"{name}: {saved[name]!r} in the checkpoint, {asked[name]!r} asked" for name in sorted(saved)
            if name in asked and name not in PER_RUN_ARGS and saved[name] != asked[name]]


def updates_for(total_frames: int, frames_per_update: int) -> int:
    """The updates of a run to total_frames: at least one, so that a run shorter than an update still trains,
    and none for total_frames 0 (the checkpoint, or the new network, evaluated alone)."""
    return max(1, total_frames // frames_per_update) if total_frames > 0 else 0


def schedule_field(what: str):
    """A trainer's schedule_frames argument: the length of its schedules, apart from where the run stops."""
    return field(default=0, metadata={"min": 0, "help": (
        f"frames over which {what} (0: --total-frames). With it, a run cut short by --total-frames or "
        f"--max-minutes, or extended on --resume, trains as the run of this length would have up to there")})


class CtrlC:
    """Ctrl-C during a trainer's command line: the first press asks the run to stop at the end of the update
    under way, as a spent --max-minutes does (a checkpoint that --resume continues, then the log, the evaluation
    and the curve); a second stops at once, losing the updates since the last checkpoint, though not in the
    middle of writing one (held)."""

    requested = False  # read by Run.end_of_update
    _held = _pending = False
    _first_at = 0.0
    # A second SIGINT this soon after the first is the same press passed on: torchrun's agent sends each
    # process the SIGINT it got from the terminal, which has already sent it to them, and kills them 30 s later.
    SAME_PRESS_S = 1.0

    def __enter__(self):
        CtrlC.requested = CtrlC._held = CtrlC._pending = False
        self.previous = signal.signal(signal.SIGINT, self._first)
        return self

    @staticmethod
    def _first(signum, frame):
        CtrlC.requested, CtrlC._first_at = True, time.monotonic()
        signal.signal(signal.SIGINT, CtrlC._second)
        print("\nCtrl-C: the run stops at the end of this update with a checkpoint; Ctrl-C again stops at once",
              file=sys.stderr, flush=True)

    @staticmethod
    def _second(signum, frame):
        if time.monotonic() - CtrlC._first_at < CtrlC.SAME_PRESS_S:
            return
        if CtrlC._held:
            CtrlC._pending = True
        else:
            raise KeyboardInterrupt

    @staticmethod
    @contextlib.contextmanager
    def held():
        """A second press waits for the end of this block: inside torch.save an interrupt surfaces as another
        error from its zip writer, and the checkpoint it was replacing stays anyway."""
        CtrlC._held = True
        try:
            yield
        finally:
            CtrlC._held = False
            if CtrlC._pending:
                CtrlC._pending = False
                raise KeyboardInterrupt

    def __exit__(self, *exc):
        signal.signal(signal.SIGINT, self.previous)
        CtrlC.requested = CtrlC._held = CtrlC._pending = False


@contextlib.contextmanager
def ctrl_c_stops(output_dir: str):
    """A command line's run under CtrlC; a second Ctrl-C ends the process with status 130 and one line instead
    of a traceback."""
    try:
        with CtrlC():
            yield
    except KeyboardInterrupt:
        print(f"stopped at once: {output_dir}/{checkpoint.NAME} holds the last checkpoint written", file=sys.stderr)
        raise SystemExit(130) from None


def main(train, args_class, description: str):
    """A trainer's command line: its arguments parsed (--help lists them), then the run, stopped cleanly by
    Ctrl-C (ctrl_c_stops)."""
    args = parse(args_class, description=description)
    with ctrl_c_stops(args.output_dir):
        return train(args)


def make_optimizer(args: CommonArgs, parameters) -> torch.optim.Optimizer:
    """args.optimizer over the parameters. fused: one pass over the parameters instead of a dozen; on a CPU it
    cuts Rainbow's Adam step (6.9M parameters) from 27 to 5 ms (one thread)."""
    if args.optimizer == "adam":
        return torch.optim.Adam(parameters, lr=args.learning_rate, eps=args.adam_eps, fused=True)
    if args.optimizer == "rmsprop":
        return torch.optim.RMSprop(parameters, lr=args.learning_rate, alpha=args.rmsprop_alpha, eps=args.rmsprop_eps)
    raise ValueError(f"--optimizer must be 'adam' or 'rmsprop', got {args.optimizer!r}")


class Run:
    """Seeds, the network and its optimizer (restored with the counters on --resume), checkpoints, budget.

    The network is args.network's actor-critic unless the trainer passes its own `model` (Rainbow's
    Q-network). A trainer's own state (a target network, counters) goes into `end_of_update(extra=...)`
    and comes back on --resume as `self.extra`. `act` (obs -> actions) is how the agent plays its tests and
    its final evaluation; None samples the actor-critic's policy.
    """

    def __init__(self, args: CommonArgs, contract: EnvContract, model: torch.nn.Module | None = None,
                 dist: Dist | None = None):
        self.args = args
        self.dist = dist or Dist()
        self.device = torch.device(args.device)
        if model is None:
            stack, height, width = contract.obs_shape
            model = network(args.network)(stack, contract.n_actions, height, width)
            if getattr(args, "normalize_obs", False):
                if self.dist.world > 1:
                    raise ValueError("normalize_obs keeps its statistics in one process; under torchrun leave it off")
                model.obs_norm = ObsNorm(height, width)
        self.model = model.to(self.device)
        self.optimizer = make_optimizer(args, self.model.parameters())
        self.start_update, self.frames, self.extra = 0, 0, {}
        state = checkpoint.load(args.output_dir, self.device) if args.resume else None
        if not args.resume and not args.quiet and self.dist.main and (Path(args.output_dir) / checkpoint.NAME).exists():
            print(f"{args.output_dir} holds a run's checkpoint: this run replaces it and its log (--resume would "
                  f"continue it; another --output-dir keeps both)", file=sys.stderr, flush=True)
        if state is not None:
            # A run resumed with other settings would train on, and checkpoint over, a different run; one past
            # its end (an evaluation of the checkpoint alone) trains nothing and may use fewer environments.
            trains = args.total_frames > state["frames"]
            if 0 < args.total_frames <= state["frames"] and not args.quiet and self.dist.main:
                print(f"--resume: the checkpoint in {args.output_dir} is at {state['frames']:,} frames, "
                      f"--total-frames {args.total_frames:,}: nothing to train (raise --total-frames to go on)",
                      file=sys.stderr, flush=True)
            conflicts = resume_conflicts(args, state.get("args", {})) if trains else []
            if conflicts:
                raise ValueError(f"--resume: the checkpoint in {args.output_dir} was trained with other settings "
                                 f"({'; '.join(conflicts)}). Resume with the checkpoint's settings (python -m "
                                 f"cule.benchmarks.train --resume reads them from it), or start a new run in "
                                 f"another --output-dir.")
            self.model.load_state_dict(state["model"])
            if "optimizer" in state:  # a checkpoint kept only to be evaluated may hold the weights alone
                self.optimizer.load_state_dict(state["optimizer"])
            self.start_update, self.frames = state["update"], state["frames"]
            self.extra = state.get("extra", {})
            torch.set_rng_state(state["torch_rng"].cpu())  # loaded onto the run's device with the rest
        self.dist.broadcast_(self.model)  # torchrun: every rank starts from rank 0's weights
        self.deadline = time.perf_counter() + 60 * args.max_minutes if args.max_minutes > 0 else None
        self.act = None
        self.tests_done = self.frames // args.test_every if args.test_every else 0
        if self.dist.main:  # snapshots of a run this one replaces, or made after the checkpoint it resumes
            for path in (Path(args.output_dir) / SNAPSHOTS).glob("test_*.pt"):
                if torch.load(path, map_location="cpu", weights_only=True)["frames"] > self.frames:
                    path.unlink()

    def _games(self) -> list[str]:
        """The games the agent is tested and evaluated on (none for the sanity task)."""
        return game_list(self.args.game) if self.args.game != "sanity" else []

    @property
    def logging(self) -> bool:
        """Whether this process writes logs (rank 0, unless --quiet)."""
        return not self.args.quiet and self.dist.main

    @staticmethod
    def seed(seed: int) -> None:
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)

    def step_grads(self, loss: torch.Tensor) -> None:
        self.optimizer.zero_grad()
        loss.backward()
        self.dist.average_grads_(self.model.parameters())
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
        self.optimizer.step()

    def end_of_update(self, update: int, num_updates: int, extra=None, log=None) -> bool:
        """Checkpoints when due, then tests the agent into `log` (a Logger) when --test-every frames have
        passed since the last test; returns True when the run is to stop, the wall-clock budget spent or Ctrl-C
        pressed (CtrlC), with a checkpoint written.

        `extra`: the trainer's own state, a dict or a function returning one (called only when saving).
        """
        stop = self.dist.agree(CtrlC.requested or (self.deadline is not None and time.perf_counter() > self.deadline),
                               self.device)
        due = (update + 1) % self.args.checkpoint_every == 0 or update + 1 == num_updates or stop
        if due and self.dist.main:
            with CtrlC.held():
                checkpoint.save(self.args.output_dir, dict(
                    model=self.model.state_dict(), optimizer=self.optimizer.state_dict(), update=update + 1,
                    frames=self.frames, torch_rng=torch.get_rng_state(), args=dataclasses.asdict(self.args),
                    trainer=type(self.args).__module__.rpartition(".")[2],
                    extra=(extra() if callable(extra) else extra) or {}))
        if stop and CtrlC.requested and self.dist.main:
            print(f"stopped after {self.frames:,} frames: {self.args.output_dir}/{checkpoint.NAME} written, "
                  f"--resume continues the run", file=sys.stderr, flush=True)
        if log is not None and self.args.test_every and self.frames // self.args.test_every > self.tests_done:
            self.tests_done = self.frames // self.args.test_every
            self.test(log)
        return stop

    def test(self, log) -> None:
        """The agent as it is now, on --test-episodes episodes by the final evaluation's protocol, into the
        log's tests.csv (rank 0; the other ranks wait for it at their next update). Training stands still:
        the log's clocks leave the test out, and the random streams the trainer draws from are restored, so a
        run trains the same with tests as without. With test_later the weights are kept for test_snapshots
        instead."""
        games = self._games()
        if not games or not log.enabled:  # --quiet, or a rank other than the first: nothing would be written
            return
        with log.suspended():
            if self.args.test_later:
                weights = {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}
                path = Path(self.args.output_dir) / SNAPSHOTS / f"test_{self.tests_done:05d}.pt"
                path.parent.mkdir(parents=True, exist_ok=True)
                torch.save(dict(model=weights, frames=self.frames, test=self.tests_done, clocks=log.clocks()), path)
                return
            log.test(self.frames, **self._test_scores(games, self.tests_done))

    def _test_scores(self, games: list[str], test: int) -> dict:
        """The scores of test number `test` of the agent as it is now, as tests.csv's columns. The test samples
        its actions from a stream of its own, seeded by its number, and leaves the trainer's streams as they
        were: a snapshot tested after the run scores what its test during training would have scored."""
        cuda = [] if self.device.type != "cuda" else [
            torch.cuda.current_device() if self.device.index is None else self.device.index]
        training = self.model.training
        self.model.eval()
        try:
            with torch.random.fork_rng(devices=cuda):
                torch.manual_seed(TEST_SEED + test)
                if len(games) == 1:
                    scores = self._evaluate(games[0], self.args.test_episodes, seed=TEST_SEED + test)
                    return dict(episodes=len(scores), score=sum(scores) / len(scores), min=min(scores),
                                max=max(scores))
                scores = self._evaluate_games(games, self.args.test_episodes, TEST_SEED + test)
                return {k.removeprefix("eval_"): v for k, v in scores["log"].items()}
        finally:
            self.model.train(training)

    def test_snapshots(self, log) -> int:
        """Tests the snapshots of test_later that the log's tests.csv lacks, in order, each as its test would
        have run during training; the model's own weights are restored afterwards. Returns how many ran."""
        games = self._games()
        folder = Path(self.args.output_dir) / SNAPSHOTS
        if not games or not log.enabled or not folder.is_dir():
            return 0
        done = set(log.tested_frames())
        own = {k: v.clone() for k, v in self.model.state_dict().items()}
        ran = 0
        try:
            for path in sorted(folder.glob("test_*.pt")):
                snap = torch.load(path, map_location=self.device, weights_only=True)
                if snap["frames"] in done:
                    continue
                self.model.load_state_dict(snap["model"])
                log.test(snap["frames"], clocks=snap["clocks"], **self._test_scores(games, snap["test"]))
                ran += 1
        finally:
            self.model.load_state_dict(own)
        return ran

    def _evaluate(self, game: str, episodes: int, seed: int = EVAL_SEED, video: str | None = None,
                  full_action_space: bool = False) -> list[float]:
        return evaluate(self.model, game, episodes, self.args.device, seed=seed, act=self.act,
                        noops=self.args.eval_noops, video=video, full_action_space=full_action_space)

    def finish(self, log, result: dict) -> None:
        """Evaluation (eval.json, agent.gif) when asked for, then the log and its curve."""
        args = self.args
        games = self._games()
        if args.test_snapshots and self.dist.main:
            self.test_snapshots(log)
        if args.eval_episodes and games and self.dist.main:
            if len(games) == 1:
                scores = self._evaluate(args.game, args.eval_episodes,
                                        video=f"{args.output_dir}/agent.gif" if args.video else None)
                result["eval_return"] = sum(scores) / len(scores)
                log.log(self.frames, eval_return=result["eval_return"])
                evaluation = dict(frames=self.frames, scores=scores, mean=result["eval_return"])
            else:
                evaluation = self._evaluate_games(games, args.eval_episodes, EVAL_SEED,
                                                  video_of=games[0] if args.video else None)
                result.update(evaluation["log"])
                log.log(self.frames, **evaluation["log"])
            with open(f"{args.output_dir}/eval.json", "w") as f:
                json.dump(evaluation, f)
        log.close()
        self.dist.close()
        if not args.quiet and self.dist.main:
            try:
                if len(games) > 1:
                    plot_games(args.output_dir, title=f"{len(games)} games, one {type(self.model).__name__}")
                else:
                    plot_curve(args.output_dir, title=f"{args.game}: {type(self.model).__name__}")
            except (ImportError, FileNotFoundError, ValueError):
                pass  # no matplotlib, or no finished episode yet

    def _evaluate_games(self, games: list[str], episodes: int, seed: int, video_of: str | None = None) -> dict:
        """A multi-task agent evaluated on each of its games in turn, over ALE's 18 actions as it was trained
        (the GIF of the game `video_of`, if given): scores per game, and the log's eval_return/<game> and
        human-normalised eval_hns/<game>, eval_hns_mean, eval_hns_median."""
        scores = {g: self._evaluate(g, episodes, seed, full_action_space=True,
                                    video=f"{self.args.output_dir}/agent.gif" if g == video_of else None)
                  for g in games}
        means = {g: sum(s) / len(s) for g, s in scores.items()}
        return dict(frames=self.frames, scores=scores,
                    log={f"eval_{k}": v for k, v in log_scalars(means).items()})
