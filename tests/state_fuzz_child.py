"""One child of tests/test_state_fuzz.py: mutated saved states restored into one game's env, a trial at a time.

    python tests/state_fuzz_child.py GAME {cpu,shim,cuda} {vector,gymnasium} TRIALS SEED

Each trial takes rows clone_state() made, overwrites some of their payload
(random bytes, mostly in the console and ALE parts; a checked field at an
extreme or random value; one flipped bit), mostly writes the digest the new
bytes sum to (as a crafted row would carry), and restores them: a StateError
must leave the environments as they were; rows that load must step, draw and
be read back. "trial K" is printed before each, so a crash names it. Ends
with "states: N trials, L loaded and stepped, R refused".
"""
import functools
import importlib
import sys

import numpy as np
import torch

import cule
from cule import _core
from cule import state as state_format
from cule.errors import StateError

H = state_format.HEADER_BYTES


def make_env(game: str, backend: str, gymnasium: bool):
    device, shim = ("cuda", False) if backend == "cuda" else ("cpu", backend == "shim")
    if not gymnasium:
        return cule.AtariVectorEnv(game, 4, device=device, _shim=shim, repeat_action_probability=0.25)
    make = importlib.import_module("cule.make")  # cule.make's own arguments, on the shim when asked
    original = make.AtariVectorEnv
    make.AtariVectorEnv = functools.partial(original, _shim=shim)
    try:
        return make.make(game, 4, device=device)
    finally:
        make.AtariVectorEnv = original


def field_spans(env, with_rng: bool) -> list[tuple[int, int]]:
    """(offset in the payload, bytes) of each checked field this row holds."""
    starts, at = {}, 0
    for name, size in env.emulator.state_layout(with_rng):
        starts[name] = at
        at += size
    return [(starts[part] + offset, size) for part, offset, size in _core.state_checked_fields.values()
            if part in starts]


def mutate(rng, payload: np.ndarray, spans) -> None:
    kind = rng.integers(100)
    if kind < 40:
        head = min(len(payload), 6000)
        for _ in range(1 + rng.integers(8 if rng.random() < 0.5 else 200)):
            payload[rng.integers(head if rng.random() < 0.8 else len(payload))] = rng.integers(256)
    elif kind < 85:
        offset, size = spans[rng.integers(len(spans))]
        width = 1 if size == 1 else 4 if size % 4 == 0 else 2
        at = offset + width * rng.integers(size // width)
        bits = 8 * width
        value = [0, (1 << bits) - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, int(rng.integers(1 << bits, dtype=np.uint64)),
                 int(rng.integers(300)), (1 << bits) - 1 - int(rng.integers(300))][rng.integers(7)]
        value &= (1 << bits) - 1  # the small and near-top values wrap in a one-byte field
        payload[at:at + width] = np.frombuffer(int(value).to_bytes(width, "little"), np.uint8)
    else:
        payload[rng.integers(len(payload))] ^= np.uint8(1 << int(rng.integers(8)))


def main(game: str, backend: str, policy: str, trials: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    env = make_env(game, backend, policy == "gymnasium")
    n_actions = env.single_action_space.n
    env.reset(seed=seed)
    for _ in range(int(rng.integers(1, 30))):
        env.step(torch.from_numpy(rng.integers(0, n_actions, 4)).to(env.device))
    with_rng = bool(rng.random() < 0.7)
    good = env.clone_state(include_rng=with_rng)
    spans = field_spans(env, with_rng)
    loaded = refused = 0
    for trial in range(trials):
        print(f"trial {trial}", flush=True)
        rows = good.cpu().clone()  # restored from the host: the CUDA backend checks them on the device
        data = rows.numpy()
        for row in rng.choice(4, size=1 if rng.random() < 0.7 else int(rng.integers(1, 5)), replace=False):
            mutate(rng, data[row, H:], spans)
        if rng.random() < 0.8:  # crafted: the digest the new bytes sum to
            sums = data[:, H:].view("<u4").astype(np.uint64).sum(axis=1, dtype=np.uint64)
            state_format.set_digests(rows, torch.from_numpy(sums.view(np.int64)))
        before = env.clone_state(include_rng=with_rng)
        try:
            env.restore_state(rows)
        except StateError:
            refused += 1
            after = env.clone_state(include_rng=with_rng)
            if not torch.equal(after[:, H:], before[:, H:]):
                raise SystemExit(f"trial {trial}: a refused restore changed an environment")
            continue
        loaded += 1
        for _ in range(int(rng.integers(1, 6))):
            env.step(torch.from_numpy(rng.integers(0, n_actions, 4)).to(env.device))
        env.get_ram(), env.get_screen(), env.get_screen_rgb()
        env.restore_state(good)
    print(f"states: {trials} trials, {loaded} loaded and stepped, {refused} refused", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
