"""The emulators every benchmark compares, behind one adapter each.

Every adapter steps a batch of `n` environments of one game with ale-py's
vector-env preprocessing where the emulator has it (84x84 grey, 4-frame
stack, frameskip 4, up to 30 no-ops, FIRE reset, reward clipping):

  cule-cpu    cule.AtariVectorEnv on the CPU (`threads` threads)
  cule-cuda   cule.AtariVectorEnv(device="cuda"), when a GPU and cupy are there
  ale-vector  ale_py.vector.AtariVectorEnv (`threads` threads)
  ale-loop    one ale_py.ALEInterface per env (frame_skip 4) stepped in a Python
              loop, grey screen read each step (no resize or stack): the
              plain-ALE baseline
  envpool     envpool.make("<Game>-v5"), if envpool is installed
  cule-envpool  cule.envpool.make("<Game>-v5"): cule behind EnvPool's interface,
              stepped by the same adapter as envpool

and, for a batch of many games (`game` a list, `n` environments per game, ALE's
full action set):

  cule-mixed  one cule.AtariVectorEnv over all the games (cule.mixed)
  ale-turns   one ale_py.vector.AtariVectorEnv per game, stepped in turn
"""
from __future__ import annotations

import importlib
import time

import numpy as np
import torch

BACKENDS = ["cule-cpu", "cule-cuda", "cule-envpool", "ale-vector", "ale-loop", "envpool"]
MIXED_BACKENDS = ["cule-mixed", "cule-mixed-cuda", "ale-turns"]


class Env:
    """A batch of `n` preprocessed Atari envs: actions [n] long in, (obs [n, 4, 84, 84] uint8, rewards [n]
    float, done [n] bool) out as torch tensors on `device`."""
    frameskip = 4
    device = torch.device("cpu")
    num_actions: int

    def __init__(self, game: str, n: int, threads: int):
        self.game, self.n = game, n

    def reset(self, seed: int) -> torch.Tensor:
        raise NotImplementedError

    def step(self, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def frame_numbers(self) -> np.ndarray:
        """Each env's emulated-frame counter as the emulator itself reports it."""
        raise NotImplementedError

    def close(self) -> None:
        pass


class CuleEnv(Env):
    def __init__(self, game, n, threads, device="cpu", **env_kwargs):
        import cule

        super().__init__(game, n, threads)
        self.device = torch.device(device)
        self.env = cule.AtariVectorEnv(game, n, num_threads=threads, device=device, **env_kwargs)
        self.num_actions = int(self.env.single_action_space.n)

    def reset(self, seed):
        obs, self.info = self.env.reset(seed=seed)
        return obs

    def step(self, actions):
        obs, reward, terminated, truncated, self.info = self.env.step(actions)
        return obs, reward.float(), terminated | truncated

    def frame_numbers(self):
        return self.info["frame_number"].cpu().numpy()

    def close(self):
        self.env.close()


class AleVectorEnv(Env):
    def __init__(self, game, n, threads, **env_kwargs):
        from ale_py.vector_env import AtariVectorEnv

        super().__init__(game, n, threads)
        self.env = AtariVectorEnv(game, n, num_threads=threads, **env_kwargs)
        self.num_actions = int(self.env.single_action_space.n)

    def reset(self, seed):
        obs, self.info = self.env.reset(seed=seed)
        return torch.from_numpy(obs)

    def step(self, actions):
        obs, reward, terminated, truncated, self.info = self.env.step(actions.numpy())
        return torch.from_numpy(obs), torch.from_numpy(reward).float(), torch.from_numpy(terminated | truncated)

    def frame_numbers(self):
        return np.asarray(self.info["frame_number"])

    def close(self):
        self.env.close()


class AleLoopEnv(Env):
    """n ALEInterfaces, frame_skip 4, stepped one after another; the grey screen is read every step unless
    `screens` is False (then obs is all zeros)."""

    def __init__(self, game, n, threads, screens: bool = True):
        import ale_py

        super().__init__(game, n, threads)
        self.ales = []
        for i in range(n):
            ale = ale_py.ALEInterface()
            ale.setLoggerMode(ale_py.LoggerMode.Error)
            ale.setInt("random_seed", i)
            ale.setInt("frame_skip", self.frameskip)
            ale.setFloat("repeat_action_probability", 0.0)
            ale.loadROM(ale_py.roms.get_rom_path(game))
            self.ales.append(ale)
        self.actions = self.ales[0].getMinimalActionSet()
        self.num_actions = len(self.actions)
        self.screen = np.zeros((n, 210, 160), np.uint8)
        self.screens = screens

    def reset(self, seed):
        for ale in self.ales:
            ale.reset_game()
        return torch.zeros(self.n, 4, 84, 84, dtype=torch.uint8)

    def step(self, actions):
        rewards, dones = np.zeros(self.n, np.float32), np.zeros(self.n, bool)
        for i, (ale, a) in enumerate(zip(self.ales, actions.tolist())):
            rewards[i] = ale.act(self.actions[a])
            dones[i] = ale.game_over()
            if dones[i]:
                ale.reset_game()
            if self.screens:
                ale.getScreenGrayscale(self.screen[i])
        # No resize or stack: the network sees the top-left 84x84 of the last screen, repeated.
        obs = torch.from_numpy(self.screen[:, :84, :84]).unsqueeze(1).expand(-1, 4, -1, -1)
        return obs, torch.from_numpy(rewards), torch.from_numpy(dones)

    def frame_numbers(self):
        return np.array([ale.getFrameNumber() for ale in self.ales])


class GymnasiumEnv(Env):
    """One `gymnasium.make("<namespace>/<Game>-v5")` env, as a gymnasium user steps it: cule's ("cule") or
    ale-py's ("ALE"), v5 settings (RGB frames, sticky actions 0.25), one int action per step from Python,
    reset when an episode ends. obs is the env's own frame (not preprocessed)."""

    def __init__(self, game, n, threads, namespace: str = "cule"):
        import gymnasium

        import cule
        from cule.atari_env import env_name

        if n != 1:
            raise ValueError(f"a gymnasium env is one environment (got n={n})")
        super().__init__(game, 1, threads)
        if namespace == "ALE":
            import ale_py

            gymnasium.register_envs(ale_py)
        else:
            cule.register_envs()
        self.env = gymnasium.make(f"{namespace}/{env_name(game)}-v5")
        self.num_actions = int(self.env.action_space.n)

    def reset(self, seed):
        obs, self.info = self.env.reset(seed=seed)
        return torch.from_numpy(obs)[None]

    def step(self, actions):
        obs, reward, terminated, truncated, self.info = self.env.step(int(actions[0]))
        if terminated or truncated:
            self.env.reset()
        return torch.from_numpy(obs)[None], torch.tensor([float(reward)]), torch.tensor([terminated or truncated])

    def frame_numbers(self):
        return np.array([self.info["frame_number"]])

    def close(self):
        self.env.close()


class EnvPoolEnv(Env):
    """EnvPool, or cule behind EnvPool's interface (cule.envpool) with the same calls."""

    def __init__(self, game, n, threads, module="envpool"):
        envpool = importlib.import_module(module)
        super().__init__(game, n, threads)
        task = "".join(w.capitalize() for w in game.split("_")) + "-v5"
        self.env = envpool.make(task, env_type="gymnasium", num_envs=n, num_threads=threads, frame_skip=4,
                                stack_num=4, img_height=84, img_width=84, noop_max=30, episodic_life=False,
                                reward_clip=True, repeat_action_probability=0.0, use_fire_reset=True)
        self.num_actions = int(self.env.action_space.n)

    def reset(self, seed):
        obs, self.info = self.env.reset()
        return torch.from_numpy(obs)

    def step(self, actions):
        obs, reward, terminated, truncated, self.info = self.env.step(actions.numpy())
        return torch.from_numpy(obs), torch.from_numpy(reward).float(), torch.from_numpy(terminated | truncated)

    def frame_numbers(self):
        return np.asarray(self.info["elapsed_step"]) * self.frameskip  # envpool counts steps, not frames

    def close(self):
        self.env.close()


class CuleMixedEnv(CuleEnv):
    def __init__(self, games, n, threads, device="cpu"):
        import cule

        Env.__init__(self, games, n * len(games), threads)
        self.device = torch.device(device)
        self.env = cule.AtariVectorEnv(list(games), n, num_threads=threads, device=device)
        self.num_actions = 18


class AleTurnsEnv(Env):
    """What a multi-task run does without a mixed batch: a vector env per game, stepped one after another and
    joined on the host."""

    def __init__(self, games, n, threads):
        from ale_py.vector_env import AtariVectorEnv

        super().__init__(games, n * len(games), threads)
        self.envs = [AtariVectorEnv(g, n, num_threads=threads, full_action_space=True) for g in games]
        self.per_game = n
        self.num_actions = 18
        # ale-py's legal set has 9 actions for skiing and lost_luggage, and a worker thread given an index past
        # it hangs the vector env: indices wrap around each game's set.
        self.sizes = np.array([[e.single_action_space.n] for e in self.envs])

    def reset(self, seed):
        return torch.from_numpy(np.concatenate([e.reset(seed=seed + k * self.per_game)[0]
                                                for k, e in enumerate(self.envs)]))

    def step(self, actions):
        per_game = actions.numpy().reshape(len(self.envs), -1) % self.sizes
        parts = [e.step(a) for e, a in zip(self.envs, per_game)]
        self.infos = [p[4] for p in parts]
        obs, reward, terminated, truncated = (np.concatenate([p[i] for p in parts]) for i in range(4))
        return torch.from_numpy(obs), torch.from_numpy(reward).float(), torch.from_numpy(terminated | truncated)

    def frame_numbers(self):
        return np.concatenate([np.asarray(info["frame_number"]) for info in self.infos])

    def close(self):
        for e in self.envs:
            e.close()


def available(backend: str) -> str | None:
    """None if `backend` can run here, else why not."""
    try:
        if backend in ("cule-cuda", "cule-mixed-cuda"):
            import cupy  # noqa: F401
            if not torch.cuda.is_available():
                return "no CUDA GPU visible to torch"
        elif backend == "envpool":
            import envpool  # noqa: F401
        elif backend.startswith("ale"):
            import ale_py  # noqa: F401
    except ImportError as e:
        return f"{e.name} is not installed"
    return None


def make(backend: str, game: str, n: int, threads: int, **env_kwargs) -> Env:
    """A `backend` (one of BACKENDS) adapter for n environments of `game`, or of MIXED_BACKENDS for n
    environments of each game of the list `game`. `env_kwargs`: AtariVectorEnv arguments of the two vector envs
    (cule-cpu, cule-cuda, ale-vector)."""
    if env_kwargs and backend not in ("cule-cpu", "cule-cuda", "ale-vector"):
        raise ValueError(f"{backend} takes no environment arguments (got {sorted(env_kwargs)})")
    if backend == "cule-cpu":
        return CuleEnv(game, n, threads, **env_kwargs)
    if backend == "cule-cuda":
        return CuleEnv(game, n, threads, device="cuda", **env_kwargs)
    if backend == "ale-vector":
        return AleVectorEnv(game, n, threads, **env_kwargs)
    if backend == "cule-envpool":
        return EnvPoolEnv(game, n, threads, module="cule.envpool")
    if backend.startswith("cule-mixed"):
        return CuleMixedEnv(game, n, threads, device="cuda" if backend.endswith("cuda") else "cpu")
    kinds = {"ale-turns": AleTurnsEnv, "ale-vector": AleVectorEnv, "ale-loop": AleLoopEnv, "envpool": EnvPoolEnv}
    return kinds[backend](game, n, threads)


def timed_steps(env: Env, steps: int, seed: int = 0) -> tuple[int, float, float]:
    """(emulated frames, wall seconds, process CPU seconds) of `steps` steps with uniformly random actions drawn
    beforehand, after a reset and one warm-up step; closes `env`. CPU seconds are the whole process's, every
    thread's (cule's and ale-py's workers run in this process): a figure other jobs on the machine inflate far
    less than the wall clock."""
    try:
        env.reset(seed)
        gen = torch.Generator().manual_seed(seed)
        actions = [torch.randint(0, env.num_actions, (env.n,), generator=gen).to(env.device)
                   for _ in range(steps + 1)]
        env.step(actions[0])
        t0, c0 = time.perf_counter(), time.process_time()
        for a in actions[1:]:
            env.step(a)
        if env.device.type == "cuda":
            torch.cuda.synchronize(env.device)
        return steps * env.frameskip * env.n, time.perf_counter() - t0, time.process_time() - c0
    finally:
        env.close()


def frames_per_second(env: Env, steps: int, seed: int = 0) -> float:
    """Emulated frames per wall-clock second of timed_steps."""
    frames, wall, _ = timed_steps(env, steps, seed)
    return frames / wall
