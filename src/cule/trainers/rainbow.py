"""Rainbow (Hessel et al. 2018) with Ape-X actors (Horgan et al. 2018), everything on one device.

Each of Rainbow's parts is a switch, so DQN and every ablation run from this file:
double Q-learning (--double), dueling heads (--dueling), distributional C51
(--atoms 51; --atoms 1 learns expected values with a Huber loss), n-step
returns (--n-step), prioritized replay (--prioritized; off = uniform), noisy
nets (--noisy; off = epsilon-greedy on a linear schedule). Ape-X actors
(--apex): environment i acts epsilon_i-greedily with
epsilon_i = epsilon^(1 + alpha i / (N - 1)) (0.4 and 7 by default), and the
actors compute the initial priorities of their transitions from the Q-values
they computed to act (no max-priority guess). The learner and the actors are
decoupled by --env-steps-per-update (environment steps, summed over all
environments, per gradient step) and, with --actor-sync-every, by a copy of
the network that the actors use and that follows the learner's every so many
gradient steps.

The replay lives on the training device (trainers/common/replay.py): each
environment's newest 84x84 frame is stored once per step and stacks are rebuilt
at sampling time; a sum-tree holds the priorities. It is not checkpointed:
after --resume the learner waits for --learning-starts new transitions, as
Ape-X's learner does after losing its replay server.

    python -m cule.trainers.rainbow --game pong --device cpu --total-frames 8000
    python -m cule.trainers.rainbow --help
    # DQN (Mnih et al. 2015): every Rainbow part and Ape-X off
    python -m cule.trainers.rainbow --no-double --no-dueling --atoms 1 --n-step 1 --no-prioritized --no-noisy --no-apex
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from cule.trainers.common.distributed import Dist
from cule.trainers.common.envs import EnvContract, make_env
from cule.trainers.common.episodes import EpisodeScores
from cule.trainers.common.logger import Logger
from cule.trainers.common.models import QNetwork
from cule.trainers.common.replay import FrameReplay, next_flags
from cule.trainers.common.run import CommonArgs, Run, main, schedule_field, updates_for
from cule.trainers.common.targets import c51_projection


@dataclass
class Args(CommonArgs):
    """Rainbow / Ape-X DQN on an Atari game with cule (every part switchable)."""
    output_dir: str = field(default="runs/rainbow", metadata={"help": "checkpoints, log.csv and TensorBoard logs"})
    num_envs: int = field(default=64, metadata={"min": 1, "help": "environments stepped together (the Ape-X actors)"})
    learning_rate: float = field(default=6.25e-5, metadata={"help": "Adam learning rate (Rainbow)"})
    adam_eps: float = field(default=1.5e-4, metadata={"help": "Adam epsilon (Rainbow)"})
    max_grad_norm: float = field(default=10.0, metadata={"help": "gradient clipping"})
    checkpoint_every: int = field(default=1000, metadata={
        "min": 1, "help": "vector steps (of all envs) between checkpoints"})
    # Rainbow's parts
    double: bool = field(default=True, metadata={"help": "double Q-learning: online argmax, target evaluation"})
    dueling: bool = field(default=True, metadata={"help": "dueling value and advantage streams"})
    atoms: int = field(default=51, metadata={"min": 1,
        "help": "C51 atoms of the return distribution; 1: expected values, Huber loss"})
    v_min: float = field(default=-10.0, metadata={"help": "lowest atom of the C51 support"})
    v_max: float = field(default=10.0, metadata={"help": "highest atom of the C51 support"})
    n_step: int = field(default=3, metadata={"min": 1, "help": "steps of the truncated multi-step return"})
    prioritized: bool = field(default=True, metadata={"help": "proportional prioritized replay; off: uniform"})
    priority_alpha: float = field(default=0.5, metadata={
        "min": 0, "help": "priority exponent (Rainbow 0.5, Ape-X 0.6)"})
    priority_beta: float = field(default=0.4, metadata={"help": "importance-sampling exponent, annealed linearly to 1"})
    schedule_frames: int = schedule_field("--priority-beta rises to 1")
    noisy: bool = field(default=True, metadata={"help": "noisy linear layers in the heads (exploration by noise)"})
    noisy_sigma0: float = field(default=0.5, metadata={"help": "initial noise scale of the noisy layers"})
    # replay and learner
    buffer_size: int = field(default=1_000_000, metadata={"min": 1,
        "help": "replay capacity in transitions (7 KB each: one 84x84 frame; pages are used as the ring fills)"})
    batch_size: int = field(default=32, metadata={"min": 1, "help": "transitions per gradient step"})
    learning_starts: int = field(default=20_000, metadata={"min": 0,
        "help": "transitions collected (in this process: also after --resume) before learning starts; at most "
                "half of the run's transitions, so that short runs learn too"})
    env_steps_per_update: float = field(default=4.0, metadata={
        "help": "environment steps (all envs together) per gradient step: the actor/learner ratio"})
    target_update_every: int = field(default=2000, metadata={
        "min": 1, "help": "gradient steps between target-network copies"})
    # exploration
    apex: bool = field(default=True, metadata={
        "help": "Ape-X actors: a fixed epsilon per env and initial priorities computed by the actors"})
    apex_epsilon: float = field(default=0.4, metadata={
        "help": "Ape-X: epsilon_i = apex_epsilon^(1 + apex_alpha i/(N-1))"})
    apex_alpha: float = field(default=7.0, metadata={"help": "Ape-X: exponent spread of the per-env epsilons"})
    actor_sync_every: int = field(default=0, metadata={"min": 0,
        "help": "gradient steps between copies of the learner's network to the actors' (0: actors use it directly)"})
    epsilon_start: float = field(default=1.0, metadata={"help": "without --apex or --noisy: initial epsilon"})
    epsilon_end: float = field(default=0.01, metadata={"help": "without --apex or --noisy: final epsilon"})
    epsilon_decay_frames: int = field(default=1_000_000, metadata={"min": 0,
        "help": "without --apex or --noisy: frames over which epsilon decays linearly"})
    eval_epsilon: float = field(default=0.001, metadata={
        "help": "epsilon of the tests and the final evaluation (noise off)"})
    log_every: int = field(default=50, metadata={"min": 1, "help": "vector steps between log lines"})

    def __post_init__(self):
        super().__post_init__()
        if not self.v_min < self.v_max:
            raise ValueError(f"--v-min ({self.v_min}) must be below --v-max ({self.v_max})")
        if not self.env_steps_per_update > 0:
            raise ValueError(f"--env-steps-per-update must be above 0, got {self.env_steps_per_update}")


def apex_epsilons(num_envs: int, epsilon: float, alpha: float) -> torch.Tensor:
    """[N] Ape-X's per-actor epsilons eps^(1 + alpha i / (N - 1)) (Horgan et al. 2018, section 4.1)."""
    i = torch.arange(num_envs, dtype=torch.float64)
    return (epsilon ** (1 + alpha * i / max(num_envs - 1, 1))).float()


def epsilon_greedy(q: torch.Tensor, epsilon: torch.Tensor) -> torch.Tensor:
    """[B] actions: argmax of q [B, A], or uniform where a draw falls below epsilon ([B] or [])."""
    random = torch.randint(0, q.shape[1], q.shape[:1], device=q.device)
    return torch.where(torch.rand(q.shape[0], device=q.device) < epsilon, random, q.argmax(1))


def _rows(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """x[k, index[k]] for x [K, A, ...] and index [K]."""
    return x[torch.arange(x.shape[0], device=x.device), index]


class Learner:
    """The loss of a sampled batch and its new priorities, for every combination of the switches."""

    def __init__(self, args: Args, model: QNetwork, target: QNetwork):
        self.args, self.model, self.target = args, model, target

    def loss(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(weighted loss [], new raw priorities [K], Q of the taken actions [K]) of a replay batch."""
        a, model, target = self.args, self.model, self.target
        if a.noisy:  # fresh noise for every gradient step, independent for the two networks
            model.reset_noise()
            target.reset_noise()
        with torch.no_grad():
            q_target, logp_target = target(batch["next_obs"])
            greedy = model(batch["next_obs"])[0].argmax(1) if a.double else q_target.argmax(1)
        q, logp = model(batch["obs"])
        q_taken = _rows(q, batch["actions"])
        if a.atoms > 1:
            with torch.no_grad():
                m = c51_projection(_rows(logp_target, greedy).exp(), batch["returns"], batch["discounts"],
                                   a.v_min, a.v_max)
            cross_entropy = -(m * _rows(logp, batch["actions"])).sum(1)
            # Rainbow prioritizes by the KL divergence: the cross-entropy less the target's entropy
            priorities = cross_entropy.detach() + torch.xlogy(m, m).sum(1)
            loss = (batch["weights"] * cross_entropy).mean()
        else:
            y = batch["returns"] + batch["discounts"] * _rows(q_target, greedy)
            priorities = (y - q_taken).detach().abs()
            loss = (batch["weights"] * F.smooth_l1_loss(q_taken, y, reduction="none")).mean()
        return loss, priorities, q_taken.detach()


class ActorPriorities:
    """Ape-X's initial priorities from the actors' own outputs: a ring of the last n + 1 steps' Q-values
    (or distributions) of the taken and of the greedy actions, so no extra forward pass is needed.

    At step t, the transition of step t - n is complete: its n-step return comes from the replay, its
    bootstrap from the greedy output at step t - n + m (m <= n, see targets.n_step_return).
    """

    def __init__(self, args: Args, num_envs: int, device: torch.device):
        self.args, self.n = args, args.n_step
        width = (args.atoms,) if args.atoms > 1 else ()
        self.taken = torch.zeros((self.n + 1, num_envs, *width), device=device)  # log p or Q of a_t
        self.greedy = torch.zeros((self.n + 1, num_envs, *width), device=device)  # p or Q of argmax
        self.envs = torch.arange(num_envs, device=device)

    def record(self, step: int, q: torch.Tensor, logp: torch.Tensor | None, action: torch.Tensor) -> None:
        k = step % (self.n + 1)
        if logp is None:
            self.taken[k], self.greedy[k] = _rows(q, action), q.max(1).values
        else:
            self.taken[k], self.greedy[k] = _rows(logp, action), _rows(logp, q.argmax(1)).exp()

    def step(self, step: int, q: torch.Tensor, logp: torch.Tensor | None, action: torch.Tensor,
             replay: FrameReplay) -> torch.Tensor | None:
        """Records step `step`; returns the raw priorities of step - n's transitions, None before step n."""
        self.record(step, q, logp, action)
        return self.priorities(step, replay) if step >= self.n else None

    def priorities(self, step: int, replay: FrameReplay) -> torch.Tensor:
        """[B] raw priorities of the transitions of absolute step `step` - n (call before adding `step`)."""
        row = step - self.n
        returns, discounts, steps = replay.n_step(torch.full_like(self.envs, row % replay.R), self.envs)
        taken = self.taken[row % (self.n + 1)]
        boot = self.greedy[(row + steps) % (self.n + 1), self.envs]
        if self.args.atoms == 1:
            return (returns + discounts * boot - taken).abs()
        m = c51_projection(boot, returns, discounts, self.args.v_min, self.args.v_max)
        return (torch.xlogy(m, m) - m * taken).sum(1)


class GradientSteps:
    """The learner's side of the loop: gradient steps paid for by the actors' environment steps
    (--env-steps-per-update), the target and actor copies, and the loss and Q sums of the log (kept on the
    device until a log line)."""

    def __init__(self, args: Args, run: Run, learner: Learner, actor: QNetwork, replay: FrameReplay,
                 envs: int, learning_starts: int):
        self.args, self.run, self.learner, self.actor, self.replay = args, run, learner, actor, replay
        self.envs, self.learning_starts = envs, learning_starts  # all ranks' envs and transitions
        self.schedule = args.schedule_frames or args.total_frames  # beta's, in frames
        self.grad_steps, self.credit = run.extra.get("grad_steps", 0), run.extra.get("credit", 0.0)
        device = run.device
        self.loss_sum, self.q_sum, self.count = torch.zeros((), device=device), torch.zeros((), device=device), 0

    def after_env_step(self, local_envs: int) -> None:
        """Once the replay holds learning_starts transitions and some complete rows, earns local_envs /
        env_steps_per_update gradient steps and takes the whole ones."""
        a, replay = self.args, self.replay
        if replay.written * self.envs < self.learning_starts or replay.written <= a.n_step + 1:
            return
        self.credit += local_envs / a.env_steps_per_update
        beta = a.priority_beta + (1 - a.priority_beta) * min(1.0, self.run.frames / self.schedule)
        while self.credit >= 1:
            self.credit -= 1
            self.step(beta)

    def step(self, beta: float) -> None:
        a, model, target = self.args, self.learner.model, self.learner.target
        batch = self.replay.sample(a.batch_size, beta)
        loss, new_priorities, q_taken = self.learner.loss(batch)
        self.run.step_grads(loss)
        self.replay.update_priorities(batch["leaves"], new_priorities)
        self.grad_steps += 1
        self.loss_sum += loss.detach()
        self.q_sum += q_taken.mean()
        self.count += 1
        if self.grad_steps % a.target_update_every == 0:
            target.load_state_dict(model.state_dict())
        if self.actor is not model and self.grad_steps % a.actor_sync_every == 0:
            self.actor.load_state_dict(model.state_dict())

    def take_means(self) -> tuple[float, float]:
        """(mean loss, mean Q of the taken actions) since the last call, nan before learning starts: host
        transfers."""
        nan = float("nan")
        means = (self.loss_sum.item() / self.count if self.count else nan,
                 self.q_sum.item() / self.count if self.count else nan)
        self.loss_sum.zero_()
        self.q_sum.zero_()
        self.count = 0
        return means

    def checkpoint(self) -> dict:
        """What --resume restores besides the run's own state."""
        return dict(target=self.learner.target.state_dict(), grad_steps=self.grad_steps, credit=self.credit)


def build_networks(args: Args, contract: EnvContract, ranks: Dist) -> tuple[Run, QNetwork, QNetwork, QNetwork]:
    """The run (restored on --resume) and its online, target and actor networks."""
    stack, height, width = contract.obs_shape
    model = QNetwork(stack, contract.n_actions, args.network, args.dueling, args.atoms, args.v_min, args.v_max,
                     args.noisy, args.noisy_sigma0, height, width)
    run = Run(args, contract, model, dist=ranks)
    model = run.model
    target = copy.deepcopy(model)
    if "target" in run.extra:
        target.load_state_dict(run.extra["target"])
    target.requires_grad_(False)
    actor = model if args.actor_sync_every == 0 else copy.deepcopy(model).requires_grad_(False)
    return run, model, target, actor


def exploration(args: Args, first_env: int, num_envs: int, device: torch.device):
    """frames -> the actors' epsilon: this rank's slice of the Ape-X epsilons over all ranks' envs, 0 with
    noisy nets, else the linear schedule."""
    eps_apex = apex_epsilons(args.num_envs, args.apex_epsilon, args.apex_alpha)[first_env:first_env + num_envs]
    eps_apex = eps_apex.to(device)

    def epsilon(frames: int) -> torch.Tensor | float:
        if args.apex:
            return eps_apex
        if args.noisy:
            return 0.0
        decay = min(1.0, frames / max(args.epsilon_decay_frames, 1))
        return args.epsilon_start + decay * (args.epsilon_end - args.epsilon_start)
    return epsilon


def choose_actions(args: Args, actor: QNetwork, obs: torch.Tensor, epsilon) -> tuple:
    """(q, log p or None, actions) of the actors on obs; fresh noise for every step."""
    with torch.no_grad():
        if args.noisy:
            actor.reset_noise()
        q, logp = actor(obs)
        return q, logp, epsilon_greedy(q, epsilon)


def log_line(log: Logger, frames: int, update: int, learning: GradientSteps, episode_return, eps) -> dict:
    """Writes a log line; returns the figures it holds."""
    loss, q = learning.take_means()
    result = dict(frames=frames, update=update, grad_steps=learning.grad_steps, episode_return=episode_return,
                  loss=loss, q=q)
    log.log(frames, episode_return=episode_return, loss=loss, q=q, grad_steps=learning.grad_steps,
            epsilon=float(eps.mean() if torch.is_tensor(eps) else eps))
    return result


def train(args: Args) -> dict:
    """Runs Rainbow / Ape-X; returns the final figures (frames, vector steps, gradient steps, returns)."""
    ranks = Dist(args)  # under torchrun: this rank's actors, replay and learner replica, on its own GPU
    device = torch.device(args.device)
    Run.seed(args.seed)
    first_env = ranks.first_env(args.num_envs)
    B = ranks.local_envs(args.num_envs)
    env = make_env(args.game, B, args.device, args.seed + first_env, args.num_threads, args.reset_mode)
    contract = EnvContract.of(env)
    stack, height, width = contract.obs_shape
    run, model, target, actor = build_networks(args, contract, ranks)
    replay = FrameReplay(args.buffer_size, B, args.n_step, args.gamma,
                         args.priority_alpha if args.prioritized else 0.0, stack=stack, frame_shape=(height, width),
                         device=device)
    actor_priorities = ActorPriorities(args, B, device) if args.apex else None
    frames_per_step = B * ranks.world * contract.frameskip
    num_steps = updates_for(args.total_frames, frames_per_step)
    start = run.start_update
    log = Logger(args.output_dir, num_steps * frames_per_step, run.frames, enabled=run.logging)
    learning_starts = min(args.learning_starts, num_steps * B * ranks.world // 2)  # transitions, all ranks
    learning = GradientSteps(args, run, Learner(args, model, target), actor, replay, B * ranks.world,
                             learning_starts)
    epsilon = exploration(args, first_env, B, device)

    def act(frames: torch.Tensor) -> torch.Tensor:  # tests and the evaluation: the model in eval mode (noise off)
        return epsilon_greedy(model(frames)[0], torch.tensor(args.eval_epsilon, device=frames.device))
    run.act = act

    obs, _ = env.reset(seed=args.seed + first_env + start)
    first = torch.ones(B, dtype=torch.bool, device=device)  # obs is its episode's first (older frames zero)
    valid = torch.ones(B, dtype=torch.bool, device=device)  # False: obs ended an episode, this step only resets
    scores = EpisodeScores(B, device)
    result, completed = {}, start
    for step in range(start, num_steps):
        local = step - start  # replay rows are counted from this process's start
        q, logp, action = choose_actions(args, actor, obs, epsilon(run.frames))
        priorities = None if actor_priorities is None else actor_priorities.step(local, q, logp, action, replay)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        terminated, truncated = terminated & valid, truncated & valid  # a reset-only step ends nothing
        ended = terminated | truncated
        replay.add(obs[:, -1], action, torch.sign(reward.float()), terminated, truncated, first, valid, priorities)
        scores.add(reward, ended)
        first, valid = next_flags(valid, ended, same_step=contract.same_step_reset)
        obs = next_obs
        run.frames += frames_per_step
        learning.after_env_step(B)
        completed = step + 1

        if (step + 1) % args.log_every == 0 or step + 1 == num_steps:  # the only host transfers
            result = log_line(log, run.frames, step + 1, learning, scores.drain(ranks), epsilon(run.frames))
        if run.end_of_update(step, num_steps, extra=learning.checkpoint, log=log):
            break

    model.eval()  # noisy layers use their means from here on
    run.finish(log, result)
    env.close()
    result.update(frames=run.frames, update=completed, grad_steps=learning.grad_steps, recent_returns=scores.recent,
                  model=model)
    return result


if __name__ == "__main__":
    main(train, Args, __doc__)
