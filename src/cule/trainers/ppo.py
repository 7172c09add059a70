"""PPO (Schulman et al. 2017) on cule's vector env, everything on one device.

Clipped surrogate objective, clipped value loss, GAE, minibatch epochs,
linear learning-rate annealing; defaults from the CuLE paper's Table 4 where
it gives them (learning rate 5e-4, Adam eps 1.5e-4, 4 epochs, 4 minibatches,
256 environments), cleanrl's Atari PPO otherwise. Observations, actions,
rewards and the rollout stay on the device; only logged scalars come back.

    python -m cule.trainers.ppo --game pong --device cpu --num-envs 16 --total-frames 200000
    python -m cule.trainers.ppo --help
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch.distributions import Categorical

from cule.trainers.common import gae
from cule.trainers.common.args import parse
from cule.trainers.common.distributed import Dist
from cule.trainers.common.envs import EnvContract, make_env
from cule.trainers.common.episodes import EpisodeScores
from cule.trainers.common.logger import Logger
from cule.trainers.common.run import ActorCriticArgs, Run


@dataclass
class Args(ActorCriticArgs):
    """PPO on an Atari game with cule."""
    output_dir: str = field(default="runs/ppo", metadata={"help": "checkpoints, log.csv and TensorBoard logs"})
    num_steps: int = field(default=128, metadata={"help": "steps per environment per update"})
    anneal_lr: bool = field(default=True, metadata={"help": "decay the learning rate linearly to 0"})
    gae_lambda: float = field(default=0.95, metadata={"help": "GAE lambda"})
    update_epochs: int = field(default=4, metadata={"help": "passes over each rollout (CuLE Table 4)"})
    num_minibatches: int = field(default=4, metadata={"help": "minibatches per pass (CuLE Table 4)"})
    clip_coef: float = field(default=0.1, metadata={"help": "surrogate clipping epsilon"})
    clip_vloss: bool = field(default=True, metadata={"help": "clip the value loss as the policy's"})


def train(args: Args) -> dict:
    """Runs PPO; returns the final figures (frames, updates, mean return of the last episodes)."""
    ranks = Dist(args)  # under torchrun: this rank's share of the envs, on its own GPU
    device = torch.device(args.device)
    Run.seed(args.seed)
    first_env = args.seed + ranks.first_env(args.num_envs)
    env = make_env(args.game, ranks.local_envs(args.num_envs), args.device, first_env, args.num_threads)
    contract = EnvContract.of(env)
    run = Run(args, contract, dist=ranks)
    model, optimizer = run.model, run.optimizer
    frames_per_update = args.num_envs * args.num_steps * contract.frameskip
    num_updates = max(1, args.total_frames // frames_per_update)
    start_update = run.start_update
    log = Logger(args.output_dir, num_updates * frames_per_update, run.frames, enabled=run.logging)

    n, T = ranks.local_envs(args.num_envs), args.num_steps
    obs_buf = torch.zeros((T, n, *contract.obs_shape), dtype=torch.uint8, device=device)
    actions = torch.zeros((T, n), dtype=torch.long, device=device)
    logprobs, rewards, values = (torch.zeros((T, n), device=device) for _ in range(3))
    dones = torch.zeros((T, n), dtype=torch.bool, device=device)
    valid = torch.ones((T, n), dtype=torch.bool, device=device)
    scores = EpisodeScores(n, device)

    obs, _ = env.reset(seed=first_env + start_update)
    after_done = torch.zeros(n, dtype=torch.bool, device=device)  # NextStep: this step only resets
    result = {}
    for update in range(start_update, num_updates):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - update / num_updates)
        for t in range(T):
            with torch.no_grad():
                logits, value = model(obs)
                dist = Categorical(logits=logits)
                action = dist.sample()
            obs_buf[t], actions[t], logprobs[t], values[t] = obs, action, dist.log_prob(action), value
            valid[t] = ~after_done
            obs, reward, terminated, truncated, _ = env.step(action)
            done = terminated | truncated
            rewards[t] = torch.sign(reward.float())
            dones[t] = done
            scores.add(reward, done)
            after_done = torch.zeros_like(done) if contract.same_step_reset else done
        run.frames += frames_per_update
        with torch.no_grad():
            bootstrap = model(obs)[1]
        advantages, returns = gae(rewards, values, dones, bootstrap, args.gamma, args.gae_lambda)

        b_obs = obs_buf.reshape(T * n, *contract.obs_shape)
        b_actions, b_logprobs = actions.reshape(-1), logprobs.reshape(-1)
        b_adv, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)
        b_valid = valid.reshape(-1).float()
        batch = T * n
        minibatch = max(1, batch // args.num_minibatches)
        for _ in range(args.update_epochs):
            order = torch.randperm(batch, device=device)
            for start in range(0, batch, minibatch):
                idx = order[start:start + minibatch]
                logits, new_value = model(b_obs[idx])
                dist = Categorical(logits=logits)
                logratio = dist.log_prob(b_actions[idx]) - b_logprobs[idx]
                ratio = logratio.exp()
                mask = b_valid[idx]
                weight = mask.sum().clamp(min=1.0)
                adv = b_adv[idx]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = (torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef))
                           * mask).sum() / weight
                if args.clip_vloss:
                    clipped = b_values[idx] + (new_value - b_values[idx]).clamp(-args.clip_coef, args.clip_coef)
                    v_loss = 0.5 * (torch.max((new_value - b_returns[idx]) ** 2, (clipped - b_returns[idx]) ** 2)
                                    * mask).sum() / weight
                else:
                    v_loss = 0.5 * (((new_value - b_returns[idx]) ** 2) * mask).sum() / weight
                entropy = (dist.entropy() * mask).sum() / weight
                loss = pg_loss - args.ent_coef * entropy + args.vf_coef * v_loss
                run.step_grads(loss)

        # Host transfers: a few logging scalars per update.
        result = dict(frames=run.frames, update=update + 1, episode_return=scores.drain(ranks),
                      loss=loss.item(), value_loss=v_loss.item(), entropy=entropy.item())
        log.log(run.frames, **{k: v for k, v in result.items() if k not in ("frames", "update")},
                learning_rate=optimizer.param_groups[0]["lr"])
        if run.end_of_update(update, num_updates):
            break
    run.finish(log, result)
    env.close()
    result.update(recent_returns=scores.recent, model=model)
    return result


if __name__ == "__main__":
    train(parse(Args, description=__doc__))
