"""PPO (Schulman et al. 2017) on cule's vector env, everything on one device.

Clipped surrogate objective, clipped value loss, GAE, minibatch epochs,
linear learning-rate annealing; defaults from the CuLE paper's Table 4 where
it gives them (learning rate 5e-4, Adam eps 1.5e-4, 4 epochs, 4 minibatches,
256 environments), cleanrl's Atari PPO otherwise. Observations, actions,
rewards and the rollout stay on the device; only logged scalars come back.

    python -m cule.trainers.ppo --game pong --device cpu --num-envs 16 --total-frames 200000
    python -m cule.trainers.ppo --game pong,breakout,boxing,freeway --device cpu --num-envs 16
    python -m cule.trainers.ppo --help
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch.distributions import Categorical

from cule.trainers.common import gae
from cule.trainers.common.distributed import Dist
from cule.trainers.common.envs import EnvContract, make_env
from cule.trainers.common.episodes import EpisodeScores
from cule.trainers.common.logger import Logger
from cule.trainers.common.models import observe
from cule.trainers.common.run import MULTI_GAME_HELP, ActorCriticArgs, Run, main, schedule_field, updates_for


@dataclass
class Args(ActorCriticArgs):
    """PPO on an Atari game, or one agent on several, with cule."""
    game: str = field(default="pong", metadata={"help": MULTI_GAME_HELP})
    output_dir: str = field(default="runs/ppo", metadata={"help": "checkpoints, log.csv and TensorBoard logs"})
    num_steps: int = field(default=128, metadata={"min": 1, "help": "steps per environment per update"})
    anneal_lr: bool = field(default=True, metadata={"help": "decay the learning rate linearly to 0"})
    schedule_frames: int = schedule_field("--anneal-lr takes the learning rate to 0")
    gae_lambda: float = field(default=0.95, metadata={"help": "GAE lambda"})
    update_epochs: int = field(default=4, metadata={"min": 1, "help": "passes over each rollout (CuLE Table 4)"})
    num_minibatches: int = field(default=4, metadata={"min": 1, "help": "minibatches per pass (CuLE Table 4)"})
    clip_coef: float = field(default=0.1, metadata={"help": "surrogate clipping epsilon"})
    clip_vloss: bool = field(default=True, metadata={"help": "clip the value loss as the policy's"})


class Rollout:
    """One update's rollout on the device, [T, n] per step and environment: observations, actions, their
    log-probabilities and values, clipped rewards, episode ends, and valid (False: a NextStep reset-only step,
    masked out of the loss)."""

    def __init__(self, T: int, n: int, obs_shape: tuple[int, ...], device: torch.device):
        self.obs = torch.zeros((T, n, *obs_shape), dtype=torch.uint8, device=device)
        self.actions = torch.zeros((T, n), dtype=torch.long, device=device)
        self.logprobs, self.rewards, self.values = (torch.zeros((T, n), device=device) for _ in range(3))
        self.dones = torch.zeros((T, n), dtype=torch.bool, device=device)
        self.valid = torch.ones((T, n), dtype=torch.bool, device=device)
        # NextStep: the environments whose next step only resets; carried over to the next rollout
        self.after_done = torch.zeros(n, dtype=torch.bool, device=device)


def collect(env, model: torch.nn.Module, ro: Rollout, obs: torch.Tensor, scores: EpisodeScores,
            same_step_reset: bool) -> torch.Tensor:
    """Fills the rollout by stepping the environments from obs with the current policy; returns the last
    observation."""
    for t in range(ro.actions.shape[0]):
        with torch.no_grad():
            observe(model, obs)
            logits, value = model(obs)
            dist = Categorical(logits=logits)
            action = dist.sample()
        ro.obs[t], ro.actions[t], ro.logprobs[t], ro.values[t] = obs, action, dist.log_prob(action), value
        ro.valid[t] = ~ro.after_done
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated | truncated
        ro.rewards[t] = torch.sign(reward.float())
        ro.dones[t] = done
        scores.add(reward, done, game=info.get("game"))
        ro.after_done = torch.zeros_like(done) if same_step_reset else done
    return obs


def ppo_loss(args: Args, model: torch.nn.Module, mb: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(loss, value loss, entropy) of a minibatch: the clipped surrogate, the (clipped) value loss and the
    entropy bonus, averaged over its valid steps, with the advantages normalized within the minibatch."""
    logits, new_value = model(mb["obs"])
    dist = Categorical(logits=logits)
    logratio = dist.log_prob(mb["actions"]) - mb["logprobs"]
    ratio = logratio.exp()
    mask = mb["valid"]
    weight = mask.sum().clamp(min=1.0)
    adv = mb["advantages"]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg_loss = (torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef))
               * mask).sum() / weight
    returns, values = mb["returns"], mb["values"]
    if args.clip_vloss:
        clipped = values + (new_value - values).clamp(-args.clip_coef, args.clip_coef)
        v_loss = 0.5 * (torch.max((new_value - returns) ** 2, (clipped - returns) ** 2) * mask).sum() / weight
    else:
        v_loss = 0.5 * (((new_value - returns) ** 2) * mask).sum() / weight
    entropy = (dist.entropy() * mask).sum() / weight
    return pg_loss - args.ent_coef * entropy + args.vf_coef * v_loss, v_loss, entropy


def optimize(args: Args, run: Run, ro: Rollout, advantages: torch.Tensor, returns: torch.Tensor):
    """update_epochs passes of shuffled minibatches over the rollout; returns the last minibatch's
    (loss, value loss, entropy)."""
    T, n = ro.actions.shape
    batch = T * n
    flat = dict(obs=ro.obs.reshape(batch, *ro.obs.shape[2:]), actions=ro.actions.reshape(-1),
                logprobs=ro.logprobs.reshape(-1), advantages=advantages.reshape(-1), returns=returns.reshape(-1),
                values=ro.values.reshape(-1), valid=ro.valid.reshape(-1).float())
    minibatch = max(1, batch // args.num_minibatches)
    for _ in range(args.update_epochs):
        order = torch.randperm(batch, device=args.device)
        for start in range(0, batch, minibatch):
            idx = order[start:start + minibatch]
            loss, v_loss, entropy = ppo_loss(args, run.model, {k: v[idx] for k, v in flat.items()})
            run.step_grads(loss)
    return loss, v_loss, entropy


def train(args: Args) -> dict:
    """Runs PPO; returns the final figures (frames, updates, mean return of the last episodes)."""
    ranks = Dist(args)  # under torchrun: this rank's share of the envs, on its own GPU
    device = torch.device(args.device)
    Run.seed(args.seed)
    first_env = args.seed + ranks.first_env(args.num_envs)
    env = make_env(args.game, ranks.local_envs(args.num_envs), args.device, first_env, args.num_threads,
                   args.reset_mode)
    contract = EnvContract.of(env)
    run = Run(args, contract, dist=ranks)
    model, optimizer = run.model, run.optimizer
    frames_per_update = args.num_envs * args.num_steps * contract.frameskip
    num_updates = updates_for(args.total_frames, frames_per_update)
    schedule = args.schedule_frames or num_updates * frames_per_update
    start_update = run.start_update
    log = Logger(args.output_dir, num_updates * frames_per_update, run.frames, enabled=run.logging)
    n = ranks.local_envs(args.num_envs)
    rollout = Rollout(args.num_steps, n, contract.obs_shape, device)
    scores = EpisodeScores(n, device, games=getattr(env, "games", ()))

    obs, _ = env.reset(seed=first_env + start_update)
    result = {}
    for update in range(start_update, num_updates):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.learning_rate * max(0.0, 1.0 - update * frames_per_update / schedule)
        obs = collect(env, model, rollout, obs, scores, contract.same_step_reset)
        run.frames += frames_per_update
        with torch.no_grad():
            bootstrap = model(obs)[1]
        advantages, returns = gae(rollout.rewards, rollout.values, rollout.dones, bootstrap, args.gamma,
                                  args.gae_lambda)
        loss, v_loss, entropy = optimize(args, run, rollout, advantages, returns)

        # Host transfers: a few logging scalars per update.
        result = dict(frames=run.frames, update=update + 1, episode_return=scores.drain(ranks),
                      loss=loss.item(), value_loss=v_loss.item(), entropy=entropy.item(),
                      **scores.by_game())  # by game: a mixed batch only
        log.log(run.frames, **{k: v for k, v in result.items() if k not in ("frames", "update")},
                learning_rate=optimizer.param_groups[0]["lr"])
        if run.end_of_update(update, num_updates, log=log):
            break
    run.finish(log, result)
    env.close()
    result.update(recent_returns=scores.recent, model=model)
    return result


if __name__ == "__main__":
    main(train, Args, __doc__)
