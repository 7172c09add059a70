"""A2C with V-trace targets and CuLE's multi-batch scheme, everything on one device.

The environments are split into `num_batches` batches that take turns: at its
turn a batch first trains on the rollout it collected at its previous turn
(by a policy now `num_batches - 1` updates old, which V-trace corrects,
IMPALA eq. 1), then collects a new rollout of `num_steps` steps with the
current policy. This is the CuLE paper's way of keeping the emulators busy
while the network trains on another batch; with one batch it is plain A2C.

    python -m trainers.a2c_vtrace --game pong --device cpu --num-envs 32 --num-batches 4
    python -m trainers.a2c_vtrace --help
"""
from __future__ import annotations

import dataclasses
import json
import time
import random
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch.distributions import Categorical

from trainers.common import checkpoint, vtrace
from trainers.common.args import parse
from trainers.common.envs import make_env
from trainers.common.evaluate import evaluate, plot_curve
from trainers.common.logger import Logger
from trainers.common.models import network


@dataclass
class Args:
    """A2C + V-trace on an Atari game with cule."""
    game: str = field(default="pong", metadata={"help": "ALE game id, or 'sanity' for the tiny on-device check task"})
    num_envs: int = field(default=256, metadata={"help": "environments in all, split evenly into the batches"})
    num_batches: int = field(default=4, metadata={"help": "batches that step and update in turn (1: plain A2C)"})
    num_steps: int = field(default=20, metadata={"help": "steps per environment per update"})
    total_frames: int = field(default=10_000_000, metadata={"help": "raw emulator frames to train for"})
    device: str = field(default="cpu", metadata={"help": "torch device for the environments and the network"})
    seed: int = field(default=1, metadata={"help": "seed of the environments, the network and the sampling"})
    output_dir: str = field(default="runs/a2c_vtrace", metadata={"help": "checkpoints, log.csv and TensorBoard logs"})
    resume: bool = field(default=False, metadata={"help": "continue from output_dir's checkpoint if there is one"})
    learning_rate: float = field(default=5e-4, metadata={"help": "Adam learning rate"})
    adam_eps: float = field(default=1.5e-4, metadata={"help": "Adam epsilon"})
    gamma: float = field(default=0.99, metadata={"help": "discount"})
    clip_rho: float = field(default=1.0, metadata={"help": "V-trace rho-bar"})
    clip_c: float = field(default=1.0, metadata={"help": "V-trace c-bar"})
    ent_coef: float = field(default=0.01, metadata={"help": "entropy bonus"})
    vf_coef: float = field(default=0.5, metadata={"help": "value loss weight"})
    max_grad_norm: float = field(default=0.5, metadata={"help": "gradient clipping"})
    num_threads: int = field(default=0, metadata={"help": "CPU emulation threads (0: all cores)"})
    checkpoint_every: int = field(default=20, metadata={"help": "updates between checkpoints"})
    max_minutes: float = field(default=0.0, metadata={"help": "stop (with a checkpoint) after this much wall time; 0: none"})
    eval_episodes: int = field(default=0, metadata={"help": "episodes evaluated at the end (sticky 0.25, 108k-frame cap)"})
    video: bool = field(default=False, metadata={"help": "with --eval-episodes: write output_dir/agent.gif"})
    network: str = field(default="nature", metadata={"help": "'nature' (Mnih et al. 2015) or 'impala' (ResNet)"})
    quiet: bool = field(default=False, metadata={"help": "no progress bar or logs (tests)"})


class Rollout:
    """One batch's rollout on the device: obs [T+1, B, 4, 84, 84], actions/behaviour log-probs/rewards/dones [T, B]."""

    def __init__(self, T: int, B: int, device: torch.device):
        self.obs = torch.zeros((T + 1, B, 4, 84, 84), dtype=torch.uint8, device=device)
        self.actions = torch.zeros((T, B), dtype=torch.long, device=device)
        self.behaviour_logp, self.rewards = torch.zeros((T, B), device=device), torch.zeros((T, B), device=device)
        self.dones = torch.zeros((T, B), dtype=torch.bool, device=device)
        self.filled = False


def train(args: Args) -> dict:
    """Runs A2C + V-trace; returns the final figures."""
    if args.num_envs % args.num_batches:
        raise ValueError(f"num_envs ({args.num_envs}) must be a multiple of num_batches ({args.num_batches})")
    device = torch.device(args.device)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    B, T = args.num_envs // args.num_batches, args.num_steps
    envs = [make_env(args.game, B, args.device, args.seed + 1000 * k, args.num_threads) for k in range(args.num_batches)]
    model = network(args.network)(4, envs[0].n_actions).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, eps=args.adam_eps)
    frames_per_update = B * T * envs[0].frameskip
    num_updates = max(1, args.total_frames // frames_per_update)
    start_update, frames = 0, 0
    state = checkpoint.load(args.output_dir, device) if args.resume else None
    if state is not None:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_update, frames = state["update"], state["frames"]
        torch.set_rng_state(state["torch_rng"])
    log = Logger(args.output_dir, num_updates * frames_per_update, frames, enabled=not args.quiet)

    rollouts = [Rollout(T, B, device) for _ in envs]
    obs = [env.reset(seed=args.seed + 1000 * k + start_update)[0] for k, env in enumerate(envs)]
    episode_return = [torch.zeros(B, device=device) for _ in envs]
    finished_sum, finished_count = torch.zeros((), device=device), torch.zeros((), device=device)
    recent, result, loss = [], {}, torch.zeros(())
    completed = start_update
    deadline = time.perf_counter() + 60 * args.max_minutes if args.max_minutes > 0 else None
    for update in range(start_update, num_updates):
        k = update % args.num_batches
        ro = rollouts[k]
        if ro.filled:  # train on this batch's previous rollout: off-policy by num_batches - 1 updates
            logits, values = model(ro.obs.reshape((T + 1) * B, 4, 84, 84))
            logits, values = logits.reshape(T + 1, B, -1), values.reshape(T + 1, B)
            dist = Categorical(logits=logits[:T])
            target_logp = dist.log_prob(ro.actions)
            discounts = args.gamma * (~ro.dones).float()
            vs, pg_adv = vtrace(ro.behaviour_logp, target_logp.detach(), ro.rewards, discounts, values[:T].detach(),
                                values[T].detach(), args.clip_rho, args.clip_c)
            pg_loss = -(pg_adv * target_logp).mean()
            v_loss = 0.5 * F.mse_loss(values[:T], vs)
            entropy = dist.entropy().mean()
            loss = pg_loss + args.vf_coef * v_loss - args.ent_coef * entropy
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
        # collect the next rollout of this batch with the current policy
        ro.obs[0] = obs[k]
        for t in range(T):
            with torch.no_grad():
                logits, _ = model(ro.obs[t])
                dist = Categorical(logits=logits)
                action = dist.sample()
            ro.actions[t], ro.behaviour_logp[t] = action, dist.log_prob(action)
            next_obs, reward, terminated, truncated, _ = envs[k].step(action)
            done = terminated | truncated
            ro.rewards[t], ro.dones[t], ro.obs[t + 1] = torch.sign(reward.float()), done, next_obs
            episode_return[k] += reward.float()
            finished_sum += (episode_return[k] * done).sum()
            finished_count += done.sum()
            episode_return[k] *= ~done
        obs[k] = ro.obs[T].clone()
        ro.filled = True
        frames += frames_per_update
        completed = update + 1

        if k == args.num_batches - 1 or update + 1 == num_updates:  # logging scalars: the only host transfers
            count = int(finished_count.item())
            if count:
                recent.append(finished_sum.item() / count)
                finished_sum.zero_()
                finished_count.zero_()
            result = dict(frames=frames, update=update + 1, episode_return=recent[-1] if recent else float("nan"),
                          loss=float(loss.item()))
            log.log(frames, episode_return=result["episode_return"], loss=result["loss"])
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
    for env in envs:
        env.close()
    result.update(frames=frames, update=completed, recent_returns=recent)
    return result


if __name__ == "__main__":
    train(parse(Args, description=__doc__))
