"""A2C with V-trace targets and CuLE's multi-batch scheme, everything on one device.

The environments are split into `num_batches` batches that take turns: at its
turn a batch first trains on the rollout it collected at its previous turn
(by a policy now `num_batches - 1` updates old, which V-trace corrects,
IMPALA eq. 1), then collects a new rollout of `num_steps` steps with the
current policy. This is the CuLE paper's way of keeping the emulators busy
while the network trains on another batch; with one batch it is plain A2C.

    python -m cule.trainers.a2c_vtrace --game pong --device cpu --num-envs 32 --num-batches 4
    python -m cule.trainers.a2c_vtrace --game pong,breakout,boxing,freeway --device cpu --num-envs 32
    python -m cule.trainers.a2c_vtrace --help
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch.distributions import Categorical

from cule.trainers.common import vtrace
from cule.trainers.common.args import parse
from cule.trainers.common.distributed import Dist
from cule.trainers.common import sampling
from cule.trainers.common.envs import EnvContract, make_env
from cule.trainers.common.episodes import EpisodeScores
from cule.trainers.common.logger import Logger
from cule.trainers.common.run import MULTI_GAME_HELP, ActorCriticArgs, Run


@dataclass
class Args(ActorCriticArgs):
    """A2C + V-trace on an Atari game, or one agent on several, with cule."""
    game: str = field(default="pong", metadata={"help": MULTI_GAME_HELP})
    output_dir: str = field(default="runs/a2c_vtrace", metadata={"help": "checkpoints, log.csv and TensorBoard logs"})
    num_batches: int = field(default=4, metadata={"help": "batches that step and update in turn (1: plain A2C)"})
    num_steps: int = field(default=20, metadata={"help": "steps per environment per update"})
    clip_rho: float = field(default=1.0, metadata={"help": "V-trace rho-bar"})
    clip_c: float = field(default=1.0, metadata={"help": "V-trace c-bar"})
    checkpoint_every: int = field(default=20, metadata={"help": "updates between checkpoints"})


class Rollout:
    """One batch's rollout on the device: obs [T+1, B, *obs_shape], actions/behaviour log-probs/rewards/dones
    [T, B]."""

    def __init__(self, T: int, B: int, obs_shape: tuple[int, ...], device: torch.device):
        self.obs = torch.zeros((T + 1, B, *obs_shape), dtype=torch.uint8, device=device)
        self.actions = torch.zeros((T, B), dtype=torch.long, device=device)
        self.behaviour_logp, self.rewards = torch.zeros((T, B), device=device), torch.zeros((T, B), device=device)
        self.dones = torch.zeros((T, B), dtype=torch.bool, device=device)
        self.filled = False


def vtrace_loss(model: torch.nn.Module, ro: Rollout, args: Args) -> torch.Tensor:
    """The actor-critic loss on a rollout collected by an older policy: policy gradient with V-trace
    advantages, value regression to the V-trace targets, minus the entropy bonus (IMPALA section 4.2).
    Rewards in the rollout are already clipped."""
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
    return pg_loss + args.vf_coef * v_loss - args.ent_coef * entropy


def train(args: Args) -> dict:
    """Runs A2C + V-trace; returns the final figures."""
    ranks = Dist(args)  # under torchrun: this rank's share of every batch, on its own GPU
    if ranks.local_envs(args.num_envs) % args.num_batches:
        raise ValueError(f"num_envs per process ({ranks.local_envs(args.num_envs)}) must be a multiple of "
                         f"num_batches ({args.num_batches})")
    device = torch.device(args.device)
    Run.seed(args.seed)
    B, T = ranks.local_envs(args.num_envs) // args.num_batches, args.num_steps
    # Batch k's envs, over all ranks, are seeded seed + 1000 k + 0..(B x ranks - 1); this rank's from first.
    first = ranks.rank * B
    envs = [make_env(args.game, B, args.device, args.seed + 1000 * k + first, args.num_threads)
            for k in range(args.num_batches)]
    env_ids = [1000 * k + first + torch.arange(B, device=device) for k in range(args.num_batches)]
    contract = EnvContract.of(envs[0])
    run = Run(args, contract, dist=ranks)
    model = run.model
    frames_per_update = B * ranks.world * T * contract.frameskip
    num_updates = max(1, args.total_frames // frames_per_update)
    start_update = run.start_update
    log = Logger(args.output_dir, num_updates * frames_per_update, run.frames, enabled=run.logging)

    rollouts = [Rollout(T, B, contract.obs_shape, device) for _ in envs]
    obs = [env.reset(seed=args.seed + 1000 * k + first + start_update)[0] for k, env in enumerate(envs)]
    scores = EpisodeScores(B * args.num_batches, device, games=getattr(envs[0], "games", ()))
    result, loss = {}, torch.zeros(())
    completed = start_update
    for update in range(start_update, num_updates):
        k = update % args.num_batches
        ro = rollouts[k]
        if ro.filled:  # train on this batch's previous rollout: off-policy by num_batches - 1 updates
            loss = vtrace_loss(model, ro, args)
            run.step_grads(loss)
        # collect the next rollout of this batch with the current policy
        ro.obs[0] = obs[k]
        for t in range(T):
            with torch.no_grad():
                logits, _ = model(ro.obs[t])
                # drawn per (seed, step, global env id): the same actions however the envs are split over ranks
                action = sampling.sample(logits, env_ids[k], update * T + t, args.seed)
            ro.actions[t], ro.behaviour_logp[t] = action, Categorical(logits=logits).log_prob(action)
            next_obs, reward, terminated, truncated, info = envs[k].step(action)
            done = terminated | truncated
            ro.rewards[t], ro.dones[t], ro.obs[t + 1] = torch.sign(reward.float()), done, next_obs
            scores.add(reward, done, slice(k * B, (k + 1) * B), info.get("game"))
        obs[k] = ro.obs[T].clone()
        ro.filled = True
        run.frames += frames_per_update
        completed = update + 1

        if k == args.num_batches - 1 or update + 1 == num_updates:  # logging scalars: the only host transfers
            result = dict(frames=run.frames, update=update + 1, episode_return=scores.drain(ranks),
                          loss=float(loss.item()), **scores.by_game())  # by game: a mixed batch only
            log.log(run.frames, **{name: v for name, v in result.items() if name not in ("frames", "update")})
        if run.end_of_update(update, num_updates):
            break
    run.finish(log, result)
    for env in envs:
        env.close()
    result.update(frames=run.frames, update=completed, recent_returns=scores.recent, model=model)
    return result


if __name__ == "__main__":
    train(parse(Args, description=__doc__))
