"""Forks: a rollout search over device-side states, and forks per second against ale-py's cloneState loop.

The search (``search``): at each decision, environment 0's state is copied
onto every other environment with one ``copy_state`` call; each copy is given
a first action (every action of the set, ``--rollouts`` copies each), then
random actions for ``--depth`` steps; the first action whose rollouts scored
best on average (rewards, minus one per life lost; ties broken at random) is
played in environment 0. Nothing leaves the env's device: on a
GPU the forks are one kernel launch.

The speed figure, same run, same machine:
  cule  ``copy_state(0, [1 .. N-1])`` repeated: forks per second, N-1 a call;
        ``clone_state`` + ``restore_state`` of all N: round trips per second;
        ``restore_state`` of stored rows (a copy, as torch.load gives them,
        so each payload's digest is summed): restores per second;
  ALE   ``ALEInterface.restoreState`` of one cloned state, repeated (how an
        ALE search forks: one environment, restored before each rollout).

    python -m cule.benchmarks.forks                       # breakout, 64 envs, CPU
    python -m cule.benchmarks.forks --game pong --device cuda --num-envs 4096
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

import cule
from cule.benchmarks import add_output_dir, at_least


def search(env: cule.AtariVectorEnv, decisions: int, rollouts: int, depth: int, seed: int = 0) -> dict:
    """Plays `decisions` steps in environment 0, each chosen by forked random rollouts; returns the score and
    the time taken. `env` needs num_envs >= 1 + actions x rollouts and batch_size == num_envs."""
    n_actions = env.single_action_space.n
    forks = n_actions * rollouts
    if env.num_envs < 1 + forks:
        raise ValueError(f"the search needs 1 + {n_actions} actions x {rollouts} rollouts = {1 + forks} "
                         f"environments, the env has {env.num_envs}")
    gen = torch.Generator().manual_seed(seed)
    env.reset(seed=seed)
    fork_ids = np.arange(1, 1 + forks)
    first = torch.arange(forks) % n_actions
    score, fork_seconds, started = 0, 0.0, time.perf_counter()
    for _ in range(decisions):
        t0 = time.perf_counter()
        root = env.clone_state([0])  # environment 0 steps with the forks below; it comes back to this
        env.copy_state(0, fork_ids)
        fork_seconds += time.perf_counter() - t0
        returns = torch.zeros(forks)
        alive = torch.ones(forks, dtype=torch.bool)
        lives = env.lives().cpu()[1:1 + forks]
        for d in range(depth):
            actions = torch.randint(0, n_actions, (env.num_envs,), generator=gen)
            if d == 0:
                actions[1:1 + forks] = first
            _, rewards, terminated, truncated, info = env.step(actions.to(env.device))
            now = info["lives"].cpu()[1:1 + forks]
            # A rollout's value: its rewards, minus one for each life it lost before its episode ended.
            returns += (rewards.cpu()[1:1 + forks].float() - (now < lives).float()) * alive
            alive &= ~(terminated | truncated).cpu()[1:1 + forks]
            lives = now
        mean = returns.view(rollouts, n_actions).mean(0)
        tied = torch.nonzero(mean == mean.max()).flatten()  # ties broken at random, not always toward NOOP
        best = int(tied[torch.randint(0, len(tied), (1,), generator=gen)])
        env.restore_state(root, [0])
        actions = torch.zeros(env.num_envs, dtype=torch.long)
        actions[0] = best
        _, rewards, terminated, truncated, _ = env.step(actions.to(env.device))
        score += int(rewards[0])
        if bool(terminated[0] | truncated[0]):
            break
    return dict(score=score, seconds=time.perf_counter() - started, fork_seconds=fork_seconds)


def random_play(game: str, decisions: int, device: str, seed: int = 0) -> int:
    """The score of `decisions` uniformly random steps from the same start: what the search has to beat."""
    env = cule.AtariVectorEnv(game, 1, device=device, num_threads=1)
    env.reset(seed=seed)
    gen = torch.Generator().manual_seed(seed + 1)
    score = 0
    for _ in range(decisions):
        _, rewards, terminated, truncated, _ = env.step(
            torch.randint(0, env.single_action_space.n, (1,), generator=gen).to(env.device))
        score += int(rewards[0])
        if bool(terminated[0] | truncated[0]):
            break
    return score


def _rate(fn, count_per_call: int, min_seconds: float) -> float:
    """Calls fn until min_seconds have passed (after one warm-up call); returns counted items per second."""
    fn()
    calls, t0 = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= min_seconds:
            return calls * count_per_call / elapsed


def cule_rates(game: str, num_envs: int, device: str, min_seconds: float) -> dict:
    env = cule.AtariVectorEnv(game, num_envs, device=device, num_threads=1)
    env.reset(seed=0)
    for a in np.random.default_rng(0).integers(0, env.single_action_space.n, size=(50, num_envs)):
        env.step(torch.from_numpy(a).to(env.device))
    sync = torch.cuda.synchronize if env.device.type == "cuda" else (lambda: None)
    targets = np.arange(1, num_envs)

    def fork():
        env.copy_state(0, targets)
        sync()

    def round_trip():
        env.restore_state(env.clone_state())
        sync()

    stored = env.clone_state().clone()  # as torch.load would give them: the digest pass runs at every restore

    def restore_stored():
        env.restore_state(stored)
        sync()

    return dict(forks_per_s=_rate(fork, num_envs - 1, min_seconds),
                round_trips_per_s=_rate(round_trip, num_envs, min_seconds),
                stored_restores_per_s=_rate(restore_stored, num_envs, min_seconds),
                state_bytes=int(env.clone_state([0]).shape[1]))


def round_trips(game: str, num_envs: int, count: int, stored: bool) -> None:
    """`count` clone_state + restore_state round trips and nothing else, for an instruction counter (callgrind
    runs it with two counts; the difference is the round trips' cost). `stored`: each restore takes a copy of the
    rows (the digest pass runs), not the tensor clone_state returned."""
    env = cule.AtariVectorEnv(game, num_envs, num_threads=1)
    env.reset(seed=0)
    for a in np.random.default_rng(0).integers(0, env.single_action_space.n, size=(5, num_envs)):
        env.step(torch.from_numpy(a))
    for _ in range(count):
        rows = env.clone_state()
        env.restore_state(rows.clone() if stored else rows)


def ale_rate(game: str, min_seconds: float) -> float:
    import ale_py
    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
    ale = ale_py.ALEInterface()
    ale.setInt("random_seed", 0)
    ale.loadROM(ale_py.roms.get_rom_path(game))
    for a in np.random.default_rng(0).integers(0, len(ale.getMinimalActionSet()), size=200):
        ale.act(ale.getMinimalActionSet()[a])
    state = ale.cloneState(include_rng=True)
    return _rate(lambda: ale.restoreState(state), 1, min_seconds)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m cule.benchmarks.forks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="breakout", help="ALE game id")
    parser.add_argument("--num-envs", type=at_least(2), default=64,
                        help="environments of the fork timing (forks: N-1 a call)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    parser.add_argument("--seconds", type=float, default=2.0, help="minimum time each rate is measured for")
    parser.add_argument("--decisions", type=at_least(1), default=300, help="steps the search plays")
    parser.add_argument("--rollouts", type=at_least(1), default=2, help="rollouts per first action at each decision")
    parser.add_argument("--depth", type=at_least(1), default=30, help="steps of each rollout")
    parser.add_argument("--round-trips", type=int, default=0, metavar="N",
                        help="only N clone+restore round trips on the CPU, nothing printed: for valgrind "
                             "--tool=callgrind, run with two N and take the difference")
    parser.add_argument("--stored", action="store_true",
                        help="with --round-trips: restore a copy of the rows (the digest pass runs)")
    add_output_dir(parser, "forks")
    args = parser.parse_args()
    if args.round_trips:
        return round_trips(args.game, args.num_envs, args.round_trips, args.stored)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    probe = cule.AtariVectorEnv(args.game, 1)
    envs = 1 + probe.single_action_space.n * args.rollouts
    probe.close()
    found = search(cule.AtariVectorEnv(args.game, envs, device=args.device, num_threads=1), args.decisions,
                   args.rollouts, args.depth)
    found["random_play_score"] = random_play(args.game, args.decisions, args.device)
    print(f"search: {args.decisions} decisions over {envs - 1} forks x {args.depth} steps: score {found['score']} "
          f"(random play: {found['random_play_score']}) in {found['seconds']:.1f} s "
          f"({found['fork_seconds'] * 1e3:.0f} ms of it cloning and forking)")
    ours = cule_rates(args.game, args.num_envs, args.device, args.seconds)
    theirs = ale_rate(args.game, args.seconds)
    result = dict(date=time.strftime("%Y-%m-%d"), command="python -m cule.benchmarks.forks " + " ".join(
        f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if k != "output_dir"),
        game=args.game, device=args.device, num_envs=args.num_envs, search=found, cule=ours,
        ale_restores_per_s=theirs, ratio=ours["forks_per_s"] / theirs)
    print(f"cule copy_state: {ours['forks_per_s']:,.0f} forks/s ({args.num_envs - 1} per call, "
          f"{ours['state_bytes']:,} bytes a state); clone+restore: {ours['round_trips_per_s']:,.0f} states/s; "
          f"restores of stored rows (digest checked): {ours['stored_restores_per_s']:,.0f} states/s")
    print(f"ale-py restoreState: {theirs:,.0f} restores/s; cule/ALE {result['ratio']:.2f}x")
    (out / "forks.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out / 'forks.json'}")


if __name__ == "__main__":
    main()
