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

from cule.trainers.common.args import parse
from cule.trainers.common.distributed import Dist
from cule.trainers.common.envs import EnvContract, make_env
from cule.trainers.common.episodes import EpisodeScores
from cule.trainers.common.logger import Logger
from cule.trainers.common.models import QNetwork
from cule.trainers.common.replay import FrameReplay, next_flags
from cule.trainers.common.run import CommonArgs, Run
from cule.trainers.common.targets import c51_projection


@dataclass
class Args(CommonArgs):
    """Rainbow / Ape-X DQN on an Atari game with cule (every part switchable)."""
    output_dir: str = field(default="runs/rainbow", metadata={"help": "checkpoints, log.csv and TensorBoard logs"})
    num_envs: int = field(default=64, metadata={"help": "environments stepped together (the Ape-X actors)"})
    learning_rate: float = field(default=6.25e-5, metadata={"help": "Adam learning rate (Rainbow)"})
    adam_eps: float = field(default=1.5e-4, metadata={"help": "Adam epsilon (Rainbow)"})
    max_grad_norm: float = field(default=10.0, metadata={"help": "gradient clipping"})
    checkpoint_every: int = field(default=1000, metadata={"help": "vector steps (of all envs) between checkpoints"})
    # Rainbow's parts
    double: bool = field(default=True, metadata={"help": "double Q-learning: online argmax, target evaluation"})
    dueling: bool = field(default=True, metadata={"help": "dueling value and advantage streams"})
    atoms: int = field(default=51, metadata={
        "help": "C51 atoms of the return distribution; 1: expected values, Huber loss"})
    v_min: float = field(default=-10.0, metadata={"help": "lowest atom of the C51 support"})
    v_max: float = field(default=10.0, metadata={"help": "highest atom of the C51 support"})
    n_step: int = field(default=3, metadata={"help": "steps of the truncated multi-step return"})
    prioritized: bool = field(default=True, metadata={"help": "proportional prioritized replay; off: uniform"})
    priority_alpha: float = field(default=0.5, metadata={"help": "priority exponent (Rainbow 0.5, Ape-X 0.6)"})
    priority_beta: float = field(default=0.4, metadata={"help": "importance-sampling exponent, annealed linearly to 1"})
    noisy: bool = field(default=True, metadata={"help": "noisy linear layers in the heads (exploration by noise)"})
    noisy_sigma0: float = field(default=0.5, metadata={"help": "initial noise scale of the noisy layers"})
    # replay and learner
    buffer_size: int = field(default=1_000_000, metadata={
        "help": "replay capacity in transitions (7 KB each: one 84x84 frame; pages are used as the ring fills)"})
    batch_size: int = field(default=32, metadata={"help": "transitions per gradient step"})
    learning_starts: int = field(default=20_000, metadata={
        "help": "transitions collected (in this process: also after --resume) before learning starts; at most "
                "half of the run's transitions, so that short runs learn too"})
    env_steps_per_update: float = field(default=4.0, metadata={
        "help": "environment steps (all envs together) per gradient step: the actor/learner ratio"})
    target_update_every: int = field(default=2000, metadata={"help": "gradient steps between target-network copies"})
    # exploration
    apex: bool = field(default=True, metadata={
        "help": "Ape-X actors: a fixed epsilon per env and initial priorities computed by the actors"})
    apex_epsilon: float = field(default=0.4, metadata={
        "help": "Ape-X: epsilon_i = apex_epsilon^(1 + apex_alpha i/(N-1))"})
    apex_alpha: float = field(default=7.0, metadata={"help": "Ape-X: exponent spread of the per-env epsilons"})
    actor_sync_every: int = field(default=0, metadata={
        "help": "gradient steps between copies of the learner's network to the actors' (0: actors use it directly)"})
    epsilon_start: float = field(default=1.0, metadata={"help": "without --apex or --noisy: initial epsilon"})
    epsilon_end: float = field(default=0.01, metadata={"help": "without --apex or --noisy: final epsilon"})
    epsilon_decay_frames: int = field(default=1_000_000, metadata={
        "help": "without --apex or --noisy: frames over which epsilon decays linearly"})
    eval_epsilon: float = field(default=0.001, metadata={"help": "epsilon of the final evaluation (noise off)"})
    log_every: int = field(default=50, metadata={"help": "vector steps between log lines"})


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


def train(args: Args) -> dict:
    """Runs Rainbow / Ape-X; returns the final figures (frames, vector steps, gradient steps, returns)."""
    ranks = Dist(args)  # under torchrun: this rank's actors, replay and learner replica, on its own GPU
    device = torch.device(args.device)
    Run.seed(args.seed)
    first_env = ranks.first_env(args.num_envs)
    B = ranks.local_envs(args.num_envs)
    env = make_env(args.game, B, args.device, args.seed + first_env, args.num_threads)
    contract = EnvContract.of(env)
    A, same_step = contract.n_actions, contract.same_step_reset
    stack, height, width = contract.obs_shape
    model = QNetwork(stack, A, args.network, args.dueling, args.atoms, args.v_min, args.v_max, args.noisy,
                     args.noisy_sigma0, height, width)
    run = Run(args, contract, model, dist=ranks)
    model = run.model
    target = copy.deepcopy(model)
    if "target" in run.extra:
        target.load_state_dict(run.extra["target"])
    target.requires_grad_(False)
    actor = model if args.actor_sync_every == 0 else copy.deepcopy(model).requires_grad_(False)
    learner = Learner(args, model, target)
    replay = FrameReplay(args.buffer_size, B, args.n_step, args.gamma,
                         args.priority_alpha if args.prioritized else 0.0, stack=stack, frame_shape=(height, width),
                         device=device)
    actor_priorities = ActorPriorities(args, B, device) if args.apex else None
    frames_per_step = B * ranks.world * contract.frameskip
    num_steps = max(1, args.total_frames // frames_per_step)
    start = run.start_update
    grad_steps, credit = run.extra.get("grad_steps", 0), run.extra.get("credit", 0.0)
    log = Logger(args.output_dir, num_steps * frames_per_step, run.frames, enabled=run.logging)
    learning_starts = min(args.learning_starts, num_steps * B * ranks.world // 2)  # transitions, all ranks
    # eps_i over all ranks' envs: this rank acts with its slice
    eps_apex = apex_epsilons(args.num_envs, args.apex_epsilon, args.apex_alpha)[first_env:first_env + B].to(device)

    def epsilon(frames: int) -> torch.Tensor | float:
        if args.apex:
            return eps_apex
        if args.noisy:
            return 0.0
        decay = min(1.0, frames / max(args.epsilon_decay_frames, 1))
        return args.epsilon_start + decay * (args.epsilon_end - args.epsilon_start)

    obs, _ = env.reset(seed=args.seed + first_env + start)
    first = torch.ones(B, dtype=torch.bool, device=device)  # obs is its episode's first (older frames zero)
    valid = torch.ones(B, dtype=torch.bool, device=device)  # False: obs ended an episode, this step only resets
    scores = EpisodeScores(B, device)
    loss_sum, q_sum, loss_count = torch.zeros((), device=device), torch.zeros((), device=device), 0
    result, completed = {}, start
    for step in range(start, num_steps):
        local = step - start  # replay rows are counted from this process's start
        with torch.no_grad():
            if args.noisy:
                actor.reset_noise()
            q, logp = actor(obs)
            action = epsilon_greedy(q, epsilon(run.frames))
        priorities = None
        if actor_priorities is not None:
            actor_priorities.record(local, q, logp, action)
            if local >= args.n_step:
                priorities = actor_priorities.priorities(local, replay)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        terminated, truncated = terminated & valid, truncated & valid  # a reset-only step ends nothing
        ended = terminated | truncated
        replay.add(obs[:, -1], action, torch.sign(reward.float()), terminated, truncated, first, valid, priorities)
        scores.add(reward, ended)
        first, valid = next_flags(valid, ended, same_step)
        obs = next_obs
        run.frames += frames_per_step

        if replay.written * B * ranks.world >= learning_starts and replay.written > args.n_step + 1:  # some rows complete
            credit += B / args.env_steps_per_update
            beta = args.priority_beta + (1 - args.priority_beta) * min(1.0, run.frames / args.total_frames)
            while credit >= 1:
                credit -= 1
                batch = replay.sample(args.batch_size, beta)
                loss, new_priorities, q_taken = learner.loss(batch)
                run.step_grads(loss)
                replay.update_priorities(batch["leaves"], new_priorities)
                grad_steps += 1
                loss_sum += loss.detach()
                q_sum += q_taken.mean()
                loss_count += 1
                if grad_steps % args.target_update_every == 0:
                    target.load_state_dict(model.state_dict())
                if actor is not model and grad_steps % args.actor_sync_every == 0:
                    actor.load_state_dict(model.state_dict())
        completed = step + 1

        if (step + 1) % args.log_every == 0 or step + 1 == num_steps:  # the only host transfers
            result = dict(frames=run.frames, update=step + 1, grad_steps=grad_steps,
                          episode_return=scores.drain(ranks),
                          loss=loss_sum.item() / loss_count if loss_count else float("nan"),
                          q=q_sum.item() / loss_count if loss_count else float("nan"))
            eps = epsilon(run.frames)
            log.log(run.frames, episode_return=result["episode_return"], loss=result["loss"], q=result["q"],
                    grad_steps=grad_steps, epsilon=float(eps.mean() if torch.is_tensor(eps) else eps))
            loss_sum.zero_()
            q_sum.zero_()
            loss_count = 0
        if run.end_of_update(step, num_steps, extra=lambda: dict(target=target.state_dict(), grad_steps=grad_steps,
                                                                 credit=credit)):
            break

    model.eval()  # noisy layers use their means from here on

    def act(frames: torch.Tensor) -> torch.Tensor:
        return epsilon_greedy(model(frames)[0], torch.tensor(args.eval_epsilon, device=frames.device))

    run.finish(log, result, act=act)
    env.close()
    result.update(frames=run.frames, update=completed, grad_steps=grad_steps, recent_returns=scores.recent,
                  model=model)
    return result


if __name__ == "__main__":
    train(parse(Args, description=__doc__))
