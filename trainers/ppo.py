"""PPO (Schulman et al. 2017) on cule's vector env, everything on one device.

Clipped surrogate objective, clipped value loss, GAE, minibatch epochs,
linear learning-rate annealing; defaults from the CuLE paper's Table 4 where
it gives them (learning rate 5e-4, Adam eps 1.5e-4, 4 epochs, 4 minibatches,
256 environments), cleanrl's Atari PPO otherwise. Observations, actions,
rewards and the rollout stay on the device; only logged scalars come back.

    python -m trainers.ppo --game pong --device cpu --num-envs 16 --total-frames 200000
    python -m trainers.ppo --help
"""
from __future__ import annotations

import dataclasses
import json
import time
import random
from dataclasses import dataclass, field

import numpy as np
import torch
from torch.distributions import Categorical

from trainers.common import checkpoint, gae
from trainers.common.args import parse
from trainers.common.envs import make_env
from trainers.common.evaluate import evaluate, plot_curve
from trainers.common.logger import Logger
from trainers.common.models import network


@dataclass
class Args:
    """PPO on an Atari game with cule."""
    game: str = field(default="pong", metadata={"help": "ALE game id, or 'sanity' for the tiny on-device check task"})
    num_envs: int = field(default=256, metadata={"help": "environments stepped together (CuLE Table 4: 256)"})
    total_frames: int = field(default=10_000_000, metadata={"help": "raw emulator frames to train for"})
    device: str = field(default="cpu", metadata={"help": "torch device for the environments and the network"})
    seed: int = field(default=1, metadata={"help": "seed of the environments, the network and the sampling"})
    output_dir: str = field(default="runs/ppo", metadata={"help": "checkpoints, log.csv and TensorBoard logs"})
    resume: bool = field(default=False, metadata={"help": "continue from output_dir's checkpoint if there is one"})
    num_steps: int = field(default=128, metadata={"help": "steps per environment per update"})
    learning_rate: float = field(default=5e-4, metadata={"help": "Adam learning rate (CuLE Table 4)"})
    adam_eps: float = field(default=1.5e-4, metadata={"help": "Adam epsilon (CuLE Table 4)"})
    anneal_lr: bool = field(default=True, metadata={"help": "decay the learning rate linearly to 0"})
    gamma: float = field(default=0.99, metadata={"help": "discount"})
    gae_lambda: float = field(default=0.95, metadata={"help": "GAE lambda"})
    update_epochs: int = field(default=4, metadata={"help": "passes over each rollout (CuLE Table 4)"})
    num_minibatches: int = field(default=4, metadata={"help": "minibatches per pass (CuLE Table 4)"})
    clip_coef: float = field(default=0.1, metadata={"help": "surrogate clipping epsilon"})
    clip_vloss: bool = field(default=True, metadata={"help": "clip the value loss as the policy's"})
    ent_coef: float = field(default=0.01, metadata={"help": "entropy bonus"})
    vf_coef: float = field(default=0.5, metadata={"help": "value loss weight"})
    max_grad_norm: float = field(default=0.5, metadata={"help": "gradient clipping"})
    num_threads: int = field(default=0, metadata={"help": "CPU emulation threads (0: all cores)"})
    checkpoint_every: int = field(default=10, metadata={"help": "updates between checkpoints"})
    max_minutes: float = field(default=0.0, metadata={"help": "stop (with a checkpoint) after this much wall time; 0: none"})
    eval_episodes: int = field(default=0, metadata={"help": "episodes evaluated at the end (sticky 0.25, 108k-frame cap)"})
    video: bool = field(default=False, metadata={"help": "with --eval-episodes: write output_dir/agent.gif"})
    network: str = field(default="nature", metadata={"help": "'nature' (Mnih et al. 2015) or 'impala' (ResNet)"})
    quiet: bool = field(default=False, metadata={"help": "no progress bar or logs (tests)"})


def train(args: Args) -> dict:
    """Runs PPO; returns the final figures (frames, updates, mean return of the last episodes)."""
    device = torch.device(args.device)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    env = make_env(args.game, args.num_envs, args.device, args.seed, args.num_threads)
    model = network(args.network)(4, env.n_actions).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, eps=args.adam_eps)
    frames_per_update = args.num_envs * args.num_steps * env.frameskip
    num_updates = max(1, args.total_frames // frames_per_update)
    start_update, frames = 0, 0
    state = checkpoint.load(args.output_dir, device) if args.resume else None
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_update, frames = state["update"], state["frames"]
        torch.set_rng_state(state["torch_rng"])
    log = Logger(args.output_dir, num_updates * frames_per_update, frames, enabled=not args.quiet)

    n, T = args.num_envs, args.num_steps
    obs_buf = torch.zeros((T, n, 4, 84, 84), dtype=torch.uint8, device=device)
    actions = torch.zeros((T, n), dtype=torch.long, device=device)
    logprobs, rewards, values = (torch.zeros((T, n), device=device) for _ in range(3))
    dones = torch.zeros((T, n), dtype=torch.bool, device=device)
    valid = torch.ones((T, n), dtype=torch.bool, device=device)
    # Episode statistics, kept on the device and read once per update.
    episode_return = torch.zeros(n, device=device)
    finished_sum, finished_count = torch.zeros((), device=device), torch.zeros((), device=device)
    recent = []

    obs, _ = env.reset(seed=args.seed + start_update)
    after_done = torch.zeros(n, dtype=torch.bool, device=device)  # NextStep: this step only resets
    result = {}
    deadline = time.perf_counter() + 60 * args.max_minutes if args.max_minutes > 0 else None
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
            episode_return += reward.float()
            finished_sum += (episode_return * done).sum()
            finished_count += done.sum()
            episode_return *= ~done
            after_done = done if args.game != "sanity" else torch.zeros_like(done)
        frames += frames_per_update
        with torch.no_grad():
            bootstrap = model(obs)[1]
        advantages, returns = gae(rewards, values, dones, bootstrap, args.gamma, args.gae_lambda)

        b_obs = obs_buf.reshape(T * n, 4, 84, 84)
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
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()

        # Host transfers: a few logging scalars per update.
        count = int(finished_count.item())
        if count:
            recent.append(finished_sum.item() / count)
            finished_sum.zero_()
            finished_count.zero_()
        result = dict(frames=frames, update=update + 1, episode_return=recent[-1] if recent else float("nan"),
                      loss=loss.item(), value_loss=v_loss.item(), entropy=entropy.item())
        log.log(frames, **{k: v for k, v in result.items() if k not in ("frames", "update")},
                learning_rate=optimizer.param_groups[0]["lr"])
        out_of_time = deadline is not None and time.perf_counter() > deadline
        if (update + 1) % args.checkpoint_every == 0 or update + 1 == num_updates or out_of_time:
            checkpoint.save(args.output_dir, dict(model=model.state_dict(), optimizer=optimizer.state_dict(),
                                                  update=update + 1, frames=frames, torch_rng=torch.get_rng_state(),
                                                  args=dataclasses.asdict(args)))
        if out_of_time:
            break
    if args.eval_episodes and args.game != "sanity":
        scores = evaluate(model, args.game, args.eval_episodes, args.device,
                          video=f"{args.output_dir}/agent.gif" if args.video else None)
        result["eval_return"] = sum(scores) / len(scores)
        log.log(frames, eval_return=result["eval_return"])
        with open(f"{args.output_dir}/eval.json", "w") as f:
            json.dump(dict(frames=frames, scores=scores, mean=result["eval_return"]), f)
    log.close()
    if not args.quiet:
        try:
            plot_curve(args.output_dir, title=f"{args.game}: {type(model).__name__}")
        except (ImportError, FileNotFoundError, ValueError):
            pass  # no matplotlib, or no finished episode yet
    env.close()
    result["recent_returns"] = recent
    return result


if __name__ == "__main__":
    train(parse(Args, description=__doc__))
