"""A2C with V-trace targets and CuLE's multi-batch scheme, everything on one device.

The environments are split into `num_batches` batches, and the network
trains on one batch's last `num_steps` steps at a time, collected by
policies up to `num_batches - 1` updates old (V-trace corrects this, IMPALA
eq. 1). With one batch it is plain A2C. The batches step in one of two ways:

- in turns (the default, best on a CPU, where a step costs in proportion to
  the environments stepped): at its turn a batch trains on the rollout it
  collected at its previous turn, then collects the next one alone;
- in lockstep (`--lockstep`, best on a GPU, where one step of 4,096
  environments takes about as long as one of 256): every environment steps
  at every step, and every `num_steps / num_batches` steps the next batch
  trains on its last `num_steps` steps. This is the CuLE paper's scheme
  (section 4, "multi batch", with N-steps = batches x SPU); its fastest Pong
  run used 1,200 environments in 20 batches, 20 steps, an update a step.

    python -m cule.trainers.a2c_vtrace --game pong --device cpu --num-envs 32 --num-batches 4
    python -m cule.trainers.a2c_vtrace --game pong --device cuda --num-envs 1200 --num-batches 20 --lockstep
    python -m cule.trainers.a2c_vtrace --game pong,breakout,boxing,freeway --device cpu --num-envs 32
    python -m cule.trainers.a2c_vtrace --help
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch.distributions import Categorical

from cule.trainers.common import vtrace
from cule.trainers.common.distributed import Dist
from cule.trainers.common import sampling
from cule.trainers.common.envs import EnvContract, make_env
from cule.trainers.common.episodes import EpisodeScores
from cule.trainers.common.logger import Logger
from cule.trainers.common.models import observe
from cule.trainers.common.run import MULTI_GAME_HELP, ActorCriticArgs, Run, main, updates_for


@dataclass
class Args(ActorCriticArgs):
    """A2C + V-trace on an Atari game, or one agent on several, with cule."""
    game: str = field(default="pong", metadata={"help": MULTI_GAME_HELP})
    output_dir: str = field(default="runs/a2c_vtrace", metadata={"help": "checkpoints, log.csv and TensorBoard logs"})
    num_batches: int = field(default=4, metadata={
        "min": 1, "help": "batches that step and update in turn (1: plain A2C)"})
    num_steps: int = field(default=20, metadata={"min": 1, "help": "steps per environment per update"})
    lockstep: bool = field(default=False, metadata={
        "help": "every environment steps at every step, and every num_steps / num_batches steps the next batch "
                "trains on its last num_steps steps (CuLE's multi-batch scheme, for GPUs); off: the batches take "
                "turns, each stepping alone"})
    start_steps: int = field(default=0, metadata={
        "help": "with --lockstep: before training, every environment plays random actions for this many steps and "
                "starts its episode afresh at a step of its own drawn from them, so episodes do not all end "
                "together (CuLE's --ale-start-steps, 400); 0: every episode starts at the first step"})
    clip_rho: float = field(default=1.0, metadata={"help": "V-trace rho-bar"})
    clip_c: float = field(default=1.0, metadata={"help": "V-trace c-bar"})
    checkpoint_every: int = field(default=20, metadata={"min": 1, "help": "updates between checkpoints"})

    def __post_init__(self):
        super().__post_init__()
        if self.num_envs % self.num_batches:
            raise ValueError(f"--num-envs ({self.num_envs}) must be a multiple of --num-batches ({self.num_batches})")
        if self.start_steps < 0 or (self.start_steps and not self.lockstep):
            raise ValueError(f"--start-steps ({self.start_steps}) staggers the episodes of --lockstep: give it with "
                             f"--lockstep, at 0 or more")
        if self.lockstep and self.num_steps % self.num_batches:
            raise ValueError(f"--lockstep trains a batch every num_steps / num_batches steps: --num-steps "
                             f"({self.num_steps}) must be a multiple of --num-batches ({self.num_batches})")


@dataclass
class Rollout:
    """One batch's rollout on the device: obs [T+1, B, *obs_shape] uint8; actions, behaviour log-probs, rewards
    (clipped) and dones [T, B]."""
    obs: torch.Tensor
    actions: torch.Tensor
    behaviour_logp: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    filled: bool = False

    @classmethod
    def zeros(cls, T: int, B: int, obs_shape: tuple[int, ...], device: torch.device) -> "Rollout":
        return cls(torch.zeros((T + 1, B, *obs_shape), dtype=torch.uint8, device=device),
                   torch.zeros((T, B), dtype=torch.long, device=device), torch.zeros((T, B), device=device),
                   torch.zeros((T, B), device=device), torch.zeros((T, B), dtype=torch.bool, device=device))

    def window(self, first: int, envs: slice) -> "Rollout":
        """Read as a ring (lockstep): the T steps first .. first + T - 1 of the envs `envs`, with step n's
        transition at slot n % T and its observation at n % (T + 1), so the step after the window's last
        keeps its observation (the bootstrap) until it is overwritten."""
        T = self.actions.shape[0]
        steps = torch.arange(first, first + T + 1, device=self.obs.device)
        o, t = steps % (T + 1), steps[:T] % T
        return Rollout(self.obs[:, envs][o], self.actions[:, envs][t], self.behaviour_logp[:, envs][t],
                       self.rewards[:, envs][t], self.dones[:, envs][t], filled=True)


def vtrace_loss(model: torch.nn.Module, ro: Rollout, args: Args) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(loss, value loss, entropy) on a rollout collected by an older policy: the loss is the policy gradient
    with V-trace advantages, value regression to the V-trace targets, minus the entropy bonus (IMPALA section
    4.2). Rewards in the rollout are already clipped. The entropy is logged because a policy that has collapsed
    to uniform (dead units in the torso) shows there first."""
    T, B = ro.actions.shape
    logits, values = model(ro.obs.reshape((T + 1) * B, *ro.obs.shape[2:]))
    logits, values = logits.reshape(T + 1, B, -1), values.reshape(T + 1, B)
    dist = Categorical(logits=logits[:T])
    target_logp = dist.log_prob(ro.actions)
    discounts = args.gamma * (~ro.dones).float()
    vs, pg_adv = vtrace(ro.behaviour_logp, target_logp.detach(), ro.rewards, discounts, values[:T].detach(),
                        values[T].detach(), args.clip_rho, args.clip_c)
    pg_loss = -(pg_adv * target_logp).mean()
    v_loss = 0.5 * F.mse_loss(values[:T], vs)
    entropy = dist.entropy().mean()
    return pg_loss + args.vf_coef * v_loss - args.ent_coef * entropy, v_loss.detach(), entropy.detach()


def act(model: torch.nn.Module, obs: torch.Tensor, env_ids: torch.Tensor, step: int, seed: int):
    """The current policy's actions on obs [B, ...] and their log-probabilities [B], drawn per (seed, step,
    global env id): the same actions however the envs are split over ranks."""
    with torch.no_grad():
        observe(model, obs)
        logits, _ = model(obs)
        action = sampling.sample(logits, env_ids, step, seed)
        return action, Categorical(logits=logits).log_prob(action)


def train(args: Args) -> dict:
    """Runs A2C + V-trace; returns the final figures."""
    ranks = Dist(args)  # under torchrun: this rank's share of every batch, on its own GPU
    local = ranks.local_envs(args.num_envs)
    if local % args.num_batches:  # under torchrun (Args checks the whole count)
        raise ValueError(f"num_envs per process ({local}) must be a multiple of num_batches ({args.num_batches})")
    Run.seed(args.seed)
    return (_lockstep if args.lockstep else _in_turns)(args, ranks, local // args.num_batches)


class _Loop:
    """What both ways of stepping share: the Run (network, optimizer, resume), the log, the episode scores of
    `num_envs` envs, the frames of an update (`envs_per_update` env steps on each rank) and the update count."""

    def __init__(self, args: Args, ranks: Dist, env, num_envs: int, envs_per_update: int):
        self.args, self.ranks = args, ranks
        self.contract = EnvContract.of(env)
        self.run = Run(args, self.contract, dist=ranks)
        self.frames_per_update = envs_per_update * ranks.world * self.contract.frameskip
        self.num_updates = updates_for(args.total_frames, self.frames_per_update)
        self.log = Logger(args.output_dir, self.num_updates * self.frames_per_update, self.run.frames,
                          enabled=self.run.logging)
        self.scores = EpisodeScores(num_envs, torch.device(args.device), games=getattr(env, "games", ()))
        self.result, self.completed = {}, self.run.start_update
        self.loss = self.value_loss = self.entropy = torch.zeros(())

    def train_on(self, rollout: Rollout) -> None:
        self.loss, self.value_loss, self.entropy = vtrace_loss(self.run.model, rollout, self.args)
        self.run.step_grads(self.loss)

    def end_update(self, update: int, round_done: bool) -> bool:
        """Counts the update's frames, logs after each round of the batches (the scalars are the only host
        transfers; by game: a mixed batch only), checkpoints when due; True when the time is up."""
        self.run.frames += self.frames_per_update
        self.completed = update + 1
        if round_done or update + 1 == self.num_updates:
            loss, value_loss, entropy = torch.stack([self.loss.detach(), self.value_loss, self.entropy]).tolist()
            self.result = dict(frames=self.run.frames, update=update + 1,
                               episode_return=self.scores.drain(self.ranks), loss=loss, value_loss=value_loss,
                               entropy=entropy, **self.scores.by_game())
            self.log.log(self.run.frames, **{k: v for k, v in self.result.items() if k not in ("frames", "update")})
        return self.run.end_of_update(update, self.num_updates, log=self.log)

    def finish(self, envs: list) -> dict:
        self.run.finish(self.log, self.result)
        for env in envs:
            env.close()
        self.result.update(frames=self.run.frames, update=self.completed, recent_returns=self.scores.recent,
                           model=self.run.model)
        return self.result


def _in_turns(args: Args, ranks: Dist, B: int) -> dict:
    """The batches take turns: each trains on its previous rollout, then collects the next one alone."""
    device, T, nb = torch.device(args.device), args.num_steps, args.num_batches
    # Batch k's envs, over all ranks, are seeded seed + 1000 k + 0..(B x ranks - 1); this rank's from first.
    first = ranks.rank * B
    envs = [make_env(args.game, B, args.device, args.seed + 1000 * k + first, args.num_threads, args.reset_mode)
            for k in range(nb)]
    env_ids = [1000 * k + first + torch.arange(B, device=device) for k in range(nb)]
    loop = _Loop(args, ranks, envs[0], B * nb, B * T)
    model, start = loop.run.model, loop.run.start_update
    rollouts = [Rollout.zeros(T, B, loop.contract.obs_shape, device) for _ in envs]
    obs = [env.reset(seed=args.seed + 1000 * k + first + start)[0] for k, env in enumerate(envs)]
    for update in range(start, loop.num_updates):
        k = update % nb
        ro = rollouts[k]
        if ro.filled:  # train on this batch's previous rollout: off-policy by num_batches - 1 updates
            loop.train_on(ro)
        # collect the next rollout of this batch with the current policy
        ro.obs[0] = obs[k]
        for t in range(T):
            action, logp = act(model, ro.obs[t], env_ids[k], update * T + t, args.seed)
            ro.actions[t], ro.behaviour_logp[t] = action, logp
            next_obs, reward, terminated, truncated, info = envs[k].step(action)
            done = terminated | truncated
            ro.rewards[t], ro.dones[t], ro.obs[t + 1] = torch.sign(reward.float()), done, next_obs
            loop.scores.add(reward, done, slice(k * B, (k + 1) * B), info.get("game"))
        obs[k] = ro.obs[T].clone()
        ro.filled = True
        if loop.end_update(update, k == nb - 1):
            break
    return loop.finish(envs)


def stagger_episodes(env, obs: torch.Tensor, steps: int, n_actions: int,
                     seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Random actions for `steps` steps, each environment reset at a step of its own drawn uniformly from them:
    in lockstep all episodes would otherwise start, and end, together, so that the episodes finishing at any
    moment are those of one length (the short, lost ones first: the log's mean score would rise and fall in
    waves) and every batch sees the same part of the game. These steps are not trained on nor counted.
    Returns the observation [N, ...] to act on next and each environment's return so far in the episode it is
    in [N] (float, on obs' device), which the episode's logged score must include."""
    n, device = obs.shape[0], obs.device
    g = torch.Generator().manual_seed(seed)
    restart = torch.randint(0, steps, (n,), generator=g)
    warm = EpisodeScores(n, device)  # its running returns only: the warm-up's episodes are not logged
    for t in range(steps):
        obs, reward, terminated, truncated, _ = env.step(torch.randint(0, n_actions, (n,), generator=g).to(device))
        warm.add(reward, terminated | truncated)
        mask = restart == t
        if mask.any():
            obs = env.reset(options={"reset_mask": mask.numpy()})[0]
            warm.returns[mask.to(device)] = 0.0
    return obs, warm.returns


def _lockstep(args: Args, ranks: Dist, B: int) -> dict:
    """Every env steps at every step; every num_steps / num_batches steps (an update) the next batch trains on
    its last num_steps steps, kept in a ring of all the envs' steps."""
    device, T, nb = torch.device(args.device), args.num_steps, args.num_batches
    spu, N = T // nb, B * nb  # steps per update; this rank's envs, batch k the slice k B .. (k + 1) B
    # This rank's envs are seeded seed + first .. seed + first + N - 1, ids first.. over all ranks.
    first = ranks.rank * N
    env = make_env(args.game, N, args.device, args.seed + first, args.num_threads, args.reset_mode)
    env_ids = first + torch.arange(N, device=device)
    loop = _Loop(args, ranks, env, N, N * spu)
    model, start = loop.run.model, loop.run.start_update
    ring = Rollout.zeros(T, N, loop.contract.obs_shape, device)
    obs = env.reset(seed=args.seed + first + start)[0]
    if args.start_steps:
        obs, returns = stagger_episodes(env, obs, args.start_steps, loop.contract.n_actions,
                                        args.seed + first + start)
        loop.scores.returns.copy_(returns)
    ring.obs[0] = obs
    n = 0  # steps since this process started (the ring is not checkpointed)
    for update in range(start, loop.num_updates):
        for i in range(spu):
            action, logp = act(model, obs, env_ids, update * spu + i, args.seed)
            ring.actions[n % T], ring.behaviour_logp[n % T] = action, logp
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated | truncated
            ring.rewards[n % T], ring.dones[n % T] = torch.sign(reward.float()), done
            ring.obs[(n + 1) % (T + 1)] = obs
            loop.scores.add(reward, done, slice(None), info.get("game"))
            n += 1
        k = update % nb
        if n >= T:  # batch k's last T steps, by policies up to nb - 1 updates old
            loop.train_on(ring.window(n - T, slice(k * B, (k + 1) * B)))
        if loop.end_update(update, k == nb - 1):
            break
    return loop.finish([env])


if __name__ == "__main__":
    main(train, Args, __doc__)
