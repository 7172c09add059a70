"""PPO (Schulman et al. 2017) in plain JAX over cule.jax.make: the rollout is one jitted ``lax.scan`` over cule's
step, with GAE after it, so frames never pass through Python; each minibatch's step is another jitted call.

The emulators are stepped by XLA through the extension's FFI handler (the
CPU backend, or the CUDA kernels on XLA's stream with ``--device cuda``).
Settings are cleanrl's Atari PPO: 8 environments, 128 steps, Adam (eps 1e-5)
at 2.5e-4 annealed to 0, 4 epochs of 4 minibatches, clip 0.1, entropy 0.01,
value 0.5, gradient norm 0.5, GAE lambda 0.95, rewards clipped to their sign
for learning (the log shows the game's score). The network is the Nature
DQN torso with a policy and a value head. No flax or optax: Adam and the
layers are written out below.

Writes log.csv (frames, wall and CPU seconds, mean return of the episodes
finished since the previous line, losses), curve.png and summary.json to
--output-dir.

    python -m cule.trainers.ppo_jax --game breakout --minutes 45
    python -m cule.trainers.ppo_jax --game pong --device cuda --num-envs 256
    python -m cule.trainers.ppo_jax --help
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

try:
    import jax
    import jax.numpy as jnp
except ImportError as error:  # pragma: no cover - exercised only without jax
    raise ImportError("cule.trainers.ppo_jax needs JAX: pip install 'cule[jax]'") from error

from cule.trainers.common.args import check_games_and_device, check_fields, parse


@dataclass
class Args:
    """PPO written in JAX, stepping cule inside jit."""
    game: str = field(default="breakout", metadata={"help": "ALE game id"})
    device: str = field(default="cpu", metadata={"help": "cule's backend: cpu, or cuda (JAX's default GPU)"})
    num_envs: int = field(default=8, metadata={"min": 1, "help": "environments"})
    num_steps: int = field(default=128, metadata={"min": 1, "help": "steps per environment per update"})
    total_frames: int = field(default=10_000_000, metadata={
        "min": 1, "help": "emulator frames to stop at (and anneal over)"})
    minutes: float = field(default=0.0, metadata={"help": "wall-clock budget (0: frames alone decide)"})
    learning_rate: float = field(default=2.5e-4, metadata={"help": "Adam's step size, annealed linearly to 0"})
    adam_eps: float = field(default=1e-5, metadata={"help": "Adam's epsilon"})
    gamma: float = field(default=0.99, metadata={"help": "discount"})
    gae_lambda: float = field(default=0.95, metadata={"help": "GAE lambda"})
    update_epochs: int = field(default=4, metadata={"min": 1, "help": "passes over each rollout"})
    num_minibatches: int = field(default=4, metadata={"min": 1, "help": "minibatches per pass"})
    clip_coef: float = field(default=0.1, metadata={"help": "surrogate and value clipping epsilon"})
    ent_coef: float = field(default=0.01, metadata={"help": "entropy bonus"})
    vf_coef: float = field(default=0.5, metadata={"help": "value loss weight"})
    max_grad_norm: float = field(default=0.5, metadata={"help": "global gradient norm clip"})
    seed: int = field(default=1, metadata={"help": "network, sampling and environment seeds"})
    output_dir: str = field(default="runs/ppo_jax", metadata={"help": "log.csv, curve.png and summary.json"})
    target: Optional[float] = field(default=None, metadata={
        "help": "score whose first time and frame count summary.json reports, marked on the curve"})

    def __post_init__(self):
        check_fields(self)
        check_games_and_device([self.game])  # the device is JAX's here, not torch's


# ---- network: the Nature DQN torso (Mnih et al. 2015), policy and value heads -------------------------------

def init_params(key, num_actions: int) -> dict:
    """Orthogonal weights (gain sqrt 2; 0.01 for the policy head, 1 for the value head), zero biases."""
    ortho = jax.nn.initializers.orthogonal
    k = jax.random.split(key, 6)

    def conv(key, out, inp, size):  # HWIO
        return ortho(np.sqrt(2))(key, (size * size * inp, out)).reshape(size, size, inp, out), jnp.zeros(out)

    def dense(key, inp, out, gain):
        return ortho(gain)(key, (inp, out)), jnp.zeros(out)
    return {"convs": [conv(k[0], 32, 4, 8), conv(k[1], 64, 32, 4), conv(k[2], 64, 64, 3)],
            "hidden": dense(k[3], 64 * 7 * 7, 512, np.sqrt(2)),
            "pi": dense(k[4], 512, num_actions, 0.01), "v": dense(k[5], 512, 1, 1.0)}


def forward(params: dict, obs):
    """obs uint8 [B, 4, 84, 84] -> (logits [B, A], values [B]). Channels last inside: in a loop body, XLA's CPU
    convolutions run some ten times faster so than channels first."""
    x = jnp.transpose(obs, (0, 2, 3, 1)).astype(jnp.float32) / 255.0
    for (w, b), stride in zip(params["convs"], (4, 2, 1)):
        x = jax.lax.conv_general_dilated(x, w, (stride, stride), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        x = jax.nn.relu(x + b)
    x = jax.nn.relu(x.reshape(x.shape[0], -1) @ params["hidden"][0] + params["hidden"][1])
    return x @ params["pi"][0] + params["pi"][1], (x @ params["v"][0] + params["v"][1])[:, 0]


# ---- Adam with global-norm clipping ------------------------------------------------------------------------

def adam_init(params) -> dict:
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    return {"m": zeros, "v": zeros, "t": jnp.zeros((), jnp.int32)}


def adam_step(args: Args, params, grads, opt: dict, lr):
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree_util.tree_leaves(grads)))
    grads = jax.tree_util.tree_map(lambda g: g * jnp.minimum(1.0, args.max_grad_norm / (norm + 1e-6)), grads)
    t = opt["t"] + 1
    m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, opt["m"], grads)
    v = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, opt["v"], grads)
    c1, c2 = 1 - 0.9 ** t, 1 - 0.999 ** t  # bias corrections; epsilon added after them, as torch and optax do
    params = jax.tree_util.tree_map(lambda p, m, v: p - lr * (m / c1) / (jnp.sqrt(v / c2) + args.adam_eps),
                                    params, m, v)
    return params, {"m": m, "v": v, "t": t}


def gae(rewards, values, dones, last_value, gamma: float, lam: float):
    """Generalised advantage estimates (Schulman et al. 2016). rewards, values, dones: [T, n] (dones: 1 where
    the episode ended at that step, so no value flows back across it); last_value: [n], the value after the
    last step. Returns advantages [T, n]."""
    next_values = jnp.concatenate([values[1:], last_value[None]])

    def back(adv, x):
        reward, value, next_value, done = x
        delta = reward + gamma * next_value * (1 - done) - value
        adv = delta + gamma * lam * (1 - done) * adv
        return adv, adv
    return jax.lax.scan(back, jnp.zeros_like(last_value), (rewards, values, next_values, dones), reverse=True)[1]


# ---- one update: rollout, GAE, minibatch epochs ------------------------------------------------------------

def make_update(args: Args, env):
    """The update: (params, opt, carry, key, lr) -> (params, opt, carry, metrics); the rollout with its
    advantages is one jitted call, each minibatch's step another. carry is (cule's state, obs, after_done [n]:
    the next step only resets (NextStep), running episode returns [n])."""
    n, T = args.num_envs, args.num_steps
    batch = n * T
    minibatch = batch // args.num_minibatches

    def rollout(params, carry, key):
        def body(carry, key):
            state, obs, after_done, running = carry
            logits, value = forward(params, obs)
            action = jax.random.categorical(key, logits)
            logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], 1)[:, 0]
            state, next_obs, reward, terminated, truncated, _ = env.step(state, action.astype(jnp.int32))
            done = terminated | truncated
            running = running + reward.astype(jnp.float32)
            finished = jnp.where(done, running, jnp.nan)
            step = dict(obs=obs, action=action, logp=logp, value=value, reward=jnp.sign(reward).astype(jnp.float32),
                        done=done.astype(jnp.float32), valid=(~after_done).astype(jnp.float32))
            return (state, next_obs, done, jnp.where(done, 0.0, running)), (step, finished)
        return jax.lax.scan(body, carry, jax.random.split(key, T))

    def loss_fn(params, mb):
        logits, value = forward(params, mb["obs"])
        logp_all = jax.nn.log_softmax(logits)
        logp = jnp.take_along_axis(logp_all, mb["action"][:, None], 1)[:, 0]
        w = mb["valid"]
        count = jnp.maximum(w.sum(), 1.0)
        mean = (mb["adv"] * w).sum() / count
        std = jnp.sqrt((((mb["adv"] - mean) ** 2) * w).sum() / count)
        adv = (mb["adv"] - mean) / (std + 1e-8)
        ratio = jnp.exp(logp - mb["logp"])
        pg = jnp.maximum(-adv * ratio, -adv * jnp.clip(ratio, 1 - args.clip_coef, 1 + args.clip_coef))
        clipped = mb["value"] + jnp.clip(value - mb["value"], -args.clip_coef, args.clip_coef)
        v_loss = 0.5 * jnp.maximum((value - mb["ret"]) ** 2, (clipped - mb["ret"]) ** 2)
        entropy = -(jnp.exp(logp_all) * logp_all).sum(-1)
        pg, v_loss, entropy = ((x * w).sum() / count for x in (pg, v_loss, entropy))
        return pg - args.ent_coef * entropy + args.vf_coef * v_loss, (v_loss, entropy)

    @jax.jit
    def collect(params, carry, key):
        """The rollout (a scan over cule's step), its advantages and returns, flattened to [n T, ...]."""
        carry, (steps, finished) = rollout(params, carry, key)
        adv = gae(steps["reward"], steps["value"], steps["done"], forward(params, carry[1])[1], args.gamma,
                  args.gae_lambda)
        data = {**steps, "adv": adv, "ret": adv + steps["value"]}
        return carry, jax.tree_util.tree_map(lambda x: x.reshape(batch, *x.shape[2:]), data), finished

    @jax.jit
    def learn(params, opt, data, idx, lr):
        """One minibatch's gradient step. A Python loop calls it: XLA's CPU backend runs the convolutions'
        gradients several times slower inside a loop of its own."""
        mb = jax.tree_util.tree_map(lambda x: x[idx], data)
        (loss, (v_loss, entropy)), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, mb)
        params, opt = adam_step(args, params, grads, opt, lr)
        return params, opt, jnp.stack([loss, v_loss, entropy])

    def update(params, opt, carry, key, lr):
        k_roll, k_epochs = jax.random.split(key)
        carry, data, finished = collect(params, carry, k_roll)
        rng = np.random.default_rng(np.asarray(jax.random.key_data(k_epochs)))
        stats = []
        for _ in range(args.update_epochs):
            for idx in rng.permutation(batch).reshape(args.num_minibatches, minibatch):
                params, opt, s = learn(params, opt, data, jnp.asarray(idx), lr)
                stats.append(s)
        stats = jnp.stack(stats).mean(0)
        return params, opt, carry, dict(finished=finished, loss=stats[0], value_loss=stats[1], entropy=stats[2])
    return update


def train(args: Args) -> dict:
    """Runs PPO; returns the final figures."""
    import cule.jax as cj
    from cule.benchmarks.train import machine, plot, summarise
    from cule.trainers.common.logger import Logger

    env = cj.make(args.game, args.num_envs, reward_clipping=False,
                  **({"device": "cuda"} if args.device == "cuda" else {}))
    frames_per_update = args.num_envs * args.num_steps * 4  # frameskip 4
    num_updates = max(1, args.total_frames // frames_per_update)
    key = jax.random.key(args.seed)
    key, k_init = jax.random.split(key)
    params = init_params(k_init, env.env.single_action_space.n)
    opt = adam_init(params)
    state, obs, _ = env.reset(args.seed)
    carry = (state, obs, jnp.zeros(args.num_envs, bool), jnp.zeros(args.num_envs))
    update = make_update(args, env)
    log = Logger(args.output_dir, num_updates * frames_per_update)
    start, frames, result = time.perf_counter(), 0, {}
    for i in range(num_updates):
        key, k = jax.random.split(key)
        lr = args.learning_rate * (1.0 - i / num_updates)
        params, opt, carry, m = update(params, opt, carry, k, jnp.float32(lr))
        frames += frames_per_update
        finished = np.asarray(m["finished"])
        episodes = finished[~np.isnan(finished)]
        result = dict(episode_return=float(episodes.mean()) if episodes.size else float("nan"),
                      loss=float(m["loss"]), value_loss=float(m["value_loss"]), entropy=float(m["entropy"]))
        log.log(frames, **result, episodes=episodes.size, learning_rate=lr)
        if args.minutes and time.perf_counter() - start > args.minutes * 60:
            break
    log.close()
    env.close()
    out = Path(args.output_dir)
    plot(out, f"PPO in JAX on {args.game} (cule.jax.make, {args.device})", args.target)
    summary = dict(summarise(out, args.target), trainer="ppo_jax", game=args.game, settings=asdict(args),
                   machine=dict(machine(), jax=jax.__version__, jax_device=str(jax.devices()[0])),
                   date=time.strftime("%Y-%m-%d"))
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return dict(frames=frames, **result)


if __name__ == "__main__":
    train(parse(Args, description=__doc__))
