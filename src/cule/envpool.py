"""EnvPool's Atari interface (``envpool.make``) on cule's emulator.

A program written for EnvPool's Atari tasks moves over by changing one import::

    import envpool                      # before
    import cule.envpool as envpool      # after

    envs = envpool.make("Pong-v5", env_type="gymnasium", num_envs=8, episodic_life=True, reward_clip=True)
    obs, info = envs.reset()                                # numpy uint8 [8, 4, 84, 84]
    obs, reward, terminated, truncated, info = envs.step(np.zeros(8, np.int32))

The config names and defaults, the gymnasium-style outputs and their dtypes,
the info keys (env_id, players, lives, reward, terminated, elapsed_step,
ram), ``env_id`` arguments, ``async_reset``/``send``/``recv`` and the
single-environment spaces are EnvPool's (1.2, ``envpool/atari/atari_env.h``
and ``envpool/python``). The emulation is cule's, which is ALE's: the same
frames as ale-py, not EnvPool's bundled ALE, so where EnvPool's Atari
environment steps differently from ALE, this follows ALE (docs/vector_env.md,
"Coming from EnvPool", lists where).
"""
from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import torch

from . import checks, games, roms
from .atari_env import env_name
from .vector_env import AtariVectorEnv

ENV_TYPES = ("gymnasium", "gym")


@dataclasses.dataclass
class Config:
    """EnvPool's Atari config, its names and defaults (``envpool.make_spec(task_id).config``); ``device`` is
    cule's own. ``max_episode_steps`` counts steps, ``batch_size`` 0 means ``num_envs``, ``mode`` and
    ``difficulty`` -1 the game's defaults, ``env_seed`` (one per environment) overrides ``seed + i``."""

    num_envs: int = 1
    batch_size: int = 0
    num_threads: int = 0
    max_num_players: int = 1
    thread_affinity_offset: int = -1
    base_path: str | None = None  # a folder holding atari/roms/<task>.bin; None: ale-py's ROMs
    seed: int = 42
    env_seed: list = dataclasses.field(default_factory=list)
    gym_reset_return_info: bool = True
    max_episode_steps: int = 27000
    stack_num: int = 4
    frame_skip: int = 4
    noop_max: int = 30
    zero_discount_on_life_loss: bool = False  # dm_env's discount only: no effect on these outputs
    episodic_life: bool = False
    reward_clip: bool = False
    use_fire_reset: bool = True
    img_height: int = 84
    img_width: int = 84
    task: str = "pong"
    mode: int = -1
    difficulty: int = -1
    full_action_space: bool = False
    repeat_action_probability: float = 0.0
    use_inter_area_resize: bool = True
    gray_scale: bool = True
    device: str = "cpu"


def list_all_envs() -> list[str]:
    """The Atari task ids, as EnvPool spells them ("Pong-v5", ..., "TicTacToe3d-v5")."""
    return [_task_id(game) for game in roms.list_games()]


def make_spec(task_id: str, **kwargs) -> "Spec":
    """The config and single-environment spaces ``make(task_id, **kwargs)`` would have."""
    config = _config(task_id, kwargs)
    channels = 1 if config.gray_scale else 3
    # The ROM under base_path may be another game's, or none of ALE's (then a bare console, all 18 actions).
    game = config.task if config.base_path is None else (roms.load_rom(_game(config)).game or games.BARE_GAME)
    info = games.game_info(game)
    n = len(info["legal_actions"] if config.full_action_space else info["minimal_actions"])
    return Spec(config, gymnasium.spaces.Box(0, 255, (config.stack_num * channels, config.img_height,
                                                      config.img_width), np.uint8), gymnasium.spaces.Discrete(n))


@dataclasses.dataclass
class Spec:
    config: Config
    observation_space: gymnasium.spaces.Box
    action_space: gymnasium.spaces.Discrete


def make(task_id: str, env_type: str = "gymnasium", **kwargs) -> "AtariEnvPool":
    """EnvPool's ``make`` for an Atari task ("Pong-v5"): ``env_type`` "gymnasium", or "gym" taken as
    "gymnasium" (gymnasium's reset and 5-tuple step, as EnvPool 1.2 gives them where the old gym package is
    absent); ``kwargs`` EnvPool's config (``Config``)."""
    if env_type not in ENV_TYPES:
        hint = " (dm_env's TimeStep is not provided)" if env_type == "dm" else ""
        raise ValueError(f"env_type must be one of {ENV_TYPES}, got {env_type!r}{hint}")
    return AtariEnvPool(make_spec(task_id, **kwargs))


def make_gymnasium(task_id: str, **kwargs) -> "AtariEnvPool":
    return make(task_id, "gymnasium", **kwargs)


def make_gym(task_id: str, **kwargs) -> "AtariEnvPool":
    return make(task_id, "gym", **kwargs)


class AtariEnvPool:
    """The environments ``make`` returns: an ``AtariVectorEnv`` (``.vector``) with EnvPool's interface.

    Outputs are numpy arrays on the CPU, torch tensors on a GPU (``device="cuda"``). ``terminated`` is the
    game's end, or with ``episodic_life`` also a lost life (lives fall and some remain, EnvPool's test)
    after which the game plays on; ``truncated`` is ALE's cap of ``max_episode_steps * frame_skip``
    frames; ``info["terminated"]`` is the game's end alone and ``info["reward"]`` the unclipped reward.
    """

    def __init__(self, spec: Spec):
        self.spec = spec
        c = spec.config
        self.observation_space = self.single_observation_space = spec.observation_space
        self.action_space = self.single_action_space = spec.action_space
        self.vector = AtariVectorEnv(
            _game(c), c.num_envs, batch_size=c.batch_size, num_threads=c.num_threads,
            thread_affinity_offset=c.thread_affinity_offset,
            max_num_frames_per_episode=c.max_episode_steps * c.frame_skip,
            repeat_action_probability=c.repeat_action_probability, full_action_space=c.full_action_space,
            img_height=c.img_height, img_width=c.img_width, grayscale=c.gray_scale, stack_num=c.stack_num,
            frameskip=c.frame_skip, noop_max=c.noop_max, reward_clipping=False, use_fire_reset=c.use_fire_reset,
            device=c.device, mode=None if c.mode == -1 else c.mode,
            difficulty=None if c.difficulty == -1 else c.difficulty)
        # On the CPU the outputs are numpy, as EnvPool's, and so is the bookkeeping below (a torch call on a
        # few numbers costs several numpy ones); on a GPU both stay torch tensors on the device.
        self._cpu = self.vector.device.type == "cpu"
        n, device = c.num_envs, self.vector.device
        # Per environment, to turn the vector env's outputs into EnvPool's: lives after its last step, steps
        # since its game was reset, and whether its next step is the vector env's reset of an ended episode.
        if self._cpu:
            self._lives, self._elapsed, self._ending = np.zeros(n, np.int32), np.zeros(n, np.int32), np.zeros(n, bool)
        else:
            self._lives, self._elapsed = (torch.zeros(n, dtype=torch.int32, device=device) for _ in range(2))
            self._ending = torch.zeros(n, dtype=torch.bool, device=device)
        self._seeded = False
        self._pending = None  # async_reset's first batch, which the next recv() returns
        self._last_ids = None  # numpy int32: the environments returned last, which send() steps

    # ---- EnvPool's attributes

    @property
    def config(self) -> dict:
        return dataclasses.asdict(self.spec.config)

    @property
    def num_envs(self) -> int:
        return self.spec.config.num_envs

    def __len__(self) -> int:
        return self.num_envs

    @property
    def all_env_ids(self) -> np.ndarray:
        return np.arange(self.num_envs, dtype=np.int32)

    @property
    def is_async(self) -> bool:
        return self.vector.batch_size != self.num_envs

    def seed(self, seed=None) -> None:
        warnings.warn("seeds are fixed when the environments are made: pass seed to make()", stacklevel=2)

    # ---- stepping

    def reset(self, env_id=None, *, seed=None, options=None):
        """Resets environments `env_id` (default: all; or ``options["reset_mask"]``), returns their
        (obs, info), or obs alone with ``gym_reset_return_info=False``."""
        if seed is not None:
            warnings.warn("reset(seed=...) is ignored, as in EnvPool: pass seed to make()", stacklevel=2)
        if options is not None:
            if env_id is not None:
                raise ValueError("pass either env_id or options['reset_mask'], not both")
            env_id = checks.reset_mask(options, self.num_envs)
        self._pending = None
        ids = checks.env_ids(env_id, "env_id", self.num_envs)
        if np.array_equal(ids, self.all_env_ids):
            obs, info = self.vector.reset(seed=self._first_seeds())
        else:
            mask = np.zeros(self.num_envs, bool)
            mask[ids] = True
            obs, info = self.vector.reset(options={"reset_mask": mask})
            pick = torch.from_numpy(ids).to(self.vector.device, torch.long)
            obs, info = obs[pick], {k: v[pick] for k, v in info.items()}
        obs, *_, info = self._reset_outputs(obs, info)
        return (obs, info) if self.spec.config.gym_reset_return_info else obs

    def async_reset(self) -> None:
        """Resets every environment; recv() returns them, batch_size at a time, as steps of reward 0."""
        self._pending = self._reset_outputs(*self.vector.reset(seed=self._first_seeds()))

    def send(self, action, env_id=None) -> None:
        """Steps the environments recv() (or reset()) returned last, one action each; `env_id` (optional)
        must name them in that order: cule steps the batch it returned last."""
        if self._pending is not None:
            raise RuntimeError("recv() the batch async_reset() prepared before send()")
        if isinstance(action, dict):  # EnvPool's dict form: {"action": ..., "env_id": ...}
            action, env_id = action["action"], action.get("env_id", env_id)
        if env_id is not None and self._last_ids is not None:
            given = checks.env_ids(env_id, "env_id", self.num_envs)
            if not np.array_equal(given, self._last_ids):
                raise ValueError(f"env_id {given.tolist()} is not the batch returned last "
                                 f"({self._last_ids.tolist()}): send() steps the environments recv() returned, "
                                 f"in that order")
        self.vector.send(action)

    def recv(self):
        """The next batch's (obs, reward, terminated, truncated, info)."""
        if self._pending is not None:
            out, self._pending = self._pending, None
            return out
        if self._cpu:
            r = self.vector._recv_arrays()
            return self._outputs(r.obs, r.rewards, r.terminated, r.truncated, r.lives, r.env_id)
        obs, reward, terminated, truncated, info = self.vector.recv()
        return self._outputs(obs, reward, terminated, truncated, info["lives"], info["env_id"])

    def step(self, action, env_id=None):
        self.send(action, env_id)
        return self.recv()

    def close(self, **kwargs) -> None:
        self.vector.close()

    # ---- internals

    def _first_seeds(self):
        """make()'s seeds for the first reset (env i: seed + i, or env_seed[i]); None after it."""
        if self._seeded:
            return None
        self._seeded = True
        c = self.spec.config
        return np.asarray(c.env_seed, np.int64) if len(c.env_seed) else c.seed

    def _reset_outputs(self, obs, info):
        """EnvPool's outputs for the vector env's reset results: a step of reward 0, no episode ended."""
        if self._cpu:
            obs, info = obs.numpy(), {k: v.numpy() for k, v in info.items()}
        return self._outputs(obs, None, None, None, info["lives"], info["env_id"])

    def _outputs(self, obs, reward, terminated, truncated, lives, env_id):
        """(obs, reward, terminated, truncated, info) as EnvPool gives them, from the vector env's outputs
        (numpy on the CPU, tensors on a GPU; reward None for a reset), updating the bookkeeping."""
        xp = np if self._cpu else torch
        ids = env_id.astype(np.int64) if self._cpu else env_id.long()
        if reward is None:
            self._elapsed[ids] = 0
            self._ending[ids] = False
            game_over, truncated, done = (xp.zeros_like(lives, dtype=bool) for _ in range(3))
            raw = xp.zeros_like(lives, dtype=xp.float32)
            clipped = _copy(raw)
        else:
            restarted = self._ending[ids]  # this step was the vector env's reset of an ended episode
            self._elapsed[ids] = xp.where(restarted, 0, self._elapsed[ids] + 1)
            game_over = terminated
            lost = False
            if self.spec.config.episodic_life:
                lost = ~restarted & (lives > 0) & (lives < self._lives[ids])  # a life lost, some left
            done = (terminated | lost) & ~truncated  # a truncated episode is not terminated, as in EnvPool
            self._ending[ids] = terminated | truncated
            raw = reward.astype(np.float32) if self._cpu else reward.float()
            clipped = xp.sign(raw) if self.spec.config.reward_clip else raw
        self._lives[ids] = lives
        self._last_ids = env_id.copy() if self._cpu else env_id.cpu().numpy()  # the caller may change env_id
        info = {"env_id": env_id, "players": {"env_id": _copy(env_id)}, "lives": lives, "reward": raw,
                "terminated": game_over.astype(np.int32) if self._cpu else game_over.to(torch.int32),
                "elapsed_step": self._elapsed[ids], "ram": self._ram(env_id)}
        return self._envpool_layout(obs), clipped, done, truncated, info

    def _ram(self, env_id):
        """The RAM of the environments just returned. On the CPU read from the consoles directly, not through
        get_ram(), which would wait for the batches still stepping in the background (other environments)."""
        if self._cpu:
            return self.vector.backend.emulator.ram_rows(np.ascontiguousarray(env_id, np.int32))
        return self.vector.get_ram()[env_id.long()]

    def _envpool_layout(self, obs):
        """RGB stacks as EnvPool lays them out: [B, stack * 3, H, W], frame by frame, channels first."""
        if self.spec.config.gray_scale:
            return obs
        b, s, h, w, c = obs.shape
        if self._cpu:
            return np.ascontiguousarray(obs.transpose(0, 1, 4, 2, 3)).reshape(b, s * c, h, w)
        return obs.permute(0, 1, 4, 2, 3).reshape(b, s * c, h, w)


def _copy(array):
    return array.copy() if isinstance(array, np.ndarray) else array.clone()


def _task_id(game: str) -> str:
    name = env_name(game)
    return ("TicTacToe3d" if name == "TicTacToe3D" else name) + "-v5"


def _config(task_id: str, kwargs: dict) -> Config:
    if not isinstance(task_id, str) or not task_id.endswith("-v5"):
        raise ValueError(f"task_id must be an Atari task such as 'Pong-v5' (envpool.list_all_envs() lists "
                         f"them), got {task_id!r}")
    names = {f.name for f in dataclasses.fields(Config)}
    unknown = sorted(set(kwargs) - names)
    if unknown:
        raise TypeError(f"unknown config {unknown}; EnvPool's Atari config takes {sorted(names - {'task'})}")
    if "task" in kwargs:
        raise TypeError("task comes from task_id; leave it out")
    config = Config(**kwargs, task=_game_id(task_id))
    if config.max_num_players != 1:
        raise ValueError(f"Atari tasks have one player; max_num_players must be 1, got {config.max_num_players}")
    if not config.use_inter_area_resize:
        raise ValueError("use_inter_area_resize=False is not supported: observations are shrunk as OpenCV's "
                         "INTER_AREA does, as ale-py and EnvPool's default do")
    if config.env_seed and len(config.env_seed) != config.num_envs:
        raise ValueError(f"env_seed needs one seed per environment ({config.num_envs}), got {len(config.env_seed)}")
    for name in ("max_episode_steps", "img_height", "img_width"):
        if not checks.is_int(getattr(config, name)) or getattr(config, name) < 1:
            raise ValueError(f"{name} must be an int >= 1, got {getattr(config, name)!r}")
    if config.batch_size == 0:
        config.batch_size = config.num_envs
    return config


def _game_id(task_id: str) -> str:
    game = roms.load_rom(task_id).game
    if game is None:
        raise ValueError(f"{task_id!r} is not one of ALE's games (envpool.list_all_envs() lists them)")
    return game


def _game(config: Config) -> str:
    """What the vector env loads: the task's ALE game (config.task), or EnvPool's ROM file under base_path."""
    if config.base_path is None:
        return config.task
    path = Path(config.base_path) / "atari" / "roms" / f"{config.task}.bin"
    if not path.is_file():
        raise FileNotFoundError(f"no ROM at {path} (base_path holds atari/roms/<task>.bin, as EnvPool's assets)")
    return str(path)
