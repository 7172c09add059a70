"""gymnasium's registry: ``gymnasium.make("cule/Pong-v5")`` and ``gymnasium.make_vec("cule/Pong-v5", num_envs=N)``.

``import cule`` registers ``cule/<Game>-v5`` for the games ale-py registers
as ``ALE/<Game>-v5``, with the same settings (frameskip 4, sticky actions
0.25, the minimal action set, a 108,000-frame cap):

- ``gymnasium.make`` gives ``AtariEnv``, one environment with numpy outputs,
  equal to ale-py's ``AtariEnv`` step for step (observation, reward,
  terminated, truncated, lives and frame counters) for the same seed;
- ``gymnasium.make_vec`` gives ``cule.AtariVectorEnv`` with those settings
  and ale-py's vector-env preprocessing (84x84 grey, stack 4), as ale-py's
  ``make_vec`` gives its ``AtariVectorEnv``; extra keyword arguments go to it
  (``device="cuda"``, ``batch_size``, ...).
"""
from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium.spaces import Box, Discrete

from .backends import INFO_OUTPUTS
from .make import make
from .roms import list_games
from .vector_env import AtariVectorEnv

NAMESPACE = "cule"
V5 = dict(repeat_action_probability=0.25, full_action_space=False, frameskip=4, max_num_frames_per_episode=108_000)


def env_name(game: str) -> str:
    """ale-py's name of a game id in an env id: "ms_pacman" -> "MsPacman"."""
    return game.title().replace("_", "")


class AtariEnv(gymnasium.Env):
    """One ALE game as ``gymnasium.make("ALE/<Game>-v5")`` gives it, emulated by cule, with numpy outputs.

    Args are ale-py's ``AtariEnv``'s: game (ALE id), mode, difficulty, obs_type ("rgb", "grayscale" or "ram"),
    frameskip (an int), repeat_action_probability, full_action_space, max_num_frames_per_episode (truncation,
    None: never), render_mode (None or "rgb_array"). Continuous actions, stochastic frameskip, sound and
    the "human" render mode are not supported (ValueError).

    ``reset(seed=s)`` seeds ALE as ale-py does (SeedSequence(s)'s second word); ``reset()`` starts a new episode
    on the same console and RNG. Stepping on after an episode ended starts the next one (cule's NextStep
    autoreset) where ale-py would keep playing the finished game: call reset() at the end, as gymnasium asks.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 30}

    def __init__(self, game: str, mode: int | None = None, difficulty: int | None = None, obs_type: str = "rgb",
                 frameskip: int = 4, repeat_action_probability: float = 0.25, full_action_space: bool = False,
                 max_num_frames_per_episode: int | None = None, render_mode: str | None = None,
                 continuous: bool = False, sound_obs: bool = False, **unsupported):
        if unsupported:
            raise TypeError(f"AtariEnv got unknown arguments {sorted(unsupported)}")
        if continuous or sound_obs:
            raise ValueError("continuous actions and sound observations are not supported")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        if obs_type not in ("rgb", "grayscale", "ram"):
            raise ValueError(f"obs_type must be 'rgb', 'grayscale' or 'ram', got {obs_type!r}")
        if isinstance(frameskip, bool) or not isinstance(frameskip, (int, np.integer)):
            raise ValueError(f"frameskip must be an int (stochastic frameskip is not supported), got {frameskip!r}")
        self.render_mode, self.obs_type = render_mode, obs_type
        self.vector = make(game, 1, device="cpu", mode=mode, difficulty=difficulty,
                           obs_type="rgb" if obs_type == "ram" else obs_type, frameskip=int(frameskip),
                           repeat_action_probability=repeat_action_probability,
                           full_action_space=full_action_space, max_num_frames_per_episode=max_num_frames_per_episode,
                           num_threads=1)
        self.action_space = Discrete(len(self.vector.action_set))
        self.observation_space = (Box(0, 255, (128,), np.uint8) if obs_type == "ram"
                                  else self.vector.single_observation_space)
        self._started = False

    def _check_open(self):
        if self.vector.backend is None:  # closed by close()
            raise RuntimeError("this AtariEnv is closed; make a new one (gymnasium.make)")

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self._check_open()
        super().reset(seed=seed)
        if seed is None and not self._started:
            seed = int(self.np_random.integers(0, 2**31 - 1))  # ale-py seeds its ALE at construction
        obs, info = self.vector.reset(seed=seed)
        self._started = True
        return self._obs(obs), self._info(info)

    def step(self, action):
        self._check_open()
        if not self._started:
            raise gymnasium.error.ResetNeeded("call reset() before step()")
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        r = self.vector._step_arrays(np.array([action], dtype=np.int64))
        return (self._obs(r.obs), float(r.rewards[0]), bool(r.terminated[0]), bool(r.truncated[0]),
                self._info(vars(r)))

    def render(self):
        self._check_open()
        if self.render_mode == "rgb_array":
            return self.vector.get_screen_rgb()[0].numpy()
        return None

    def get_action_meanings(self) -> list[str]:
        from .games import ACTION_NAMES
        return [ACTION_NAMES[a] for a in self.vector.action_set]

    def close(self):
        self.vector.close()

    def _obs(self, obs) -> np.ndarray:
        return self.vector.get_ram()[0].numpy() if self.obs_type == "ram" else np.asarray(obs)[0]

    @staticmethod
    def _info(outputs) -> dict:
        """ale-py's info from the step's outputs by name (tensors at a reset, numpy arrays at a step)."""
        return {name: int(outputs[name][0]) for name in INFO_OUTPUTS}


def make_vec(game: str, num_envs: int = 1, **kwargs) -> AtariVectorEnv:
    """``gymnasium.make_vec("cule/<Game>-v5", num_envs, **kwargs)``: cule.AtariVectorEnv with the v5 settings,
    `kwargs` overriding them."""
    kwargs.pop("max_episode_steps", None)  # gymnasium's TimeLimit; the frame cap is the env's own
    return AtariVectorEnv(game, num_envs, **kwargs)


def register_envs() -> None:
    """Registers cule/<Game>-v5 with gymnasium for each of the 104 games (ale-py registers ALE/<Game>-v5 for the
    same ones)."""
    for game in list_games():
        env_id = f"{NAMESPACE}/{env_name(game)}-v5"
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(id=env_id, entry_point="cule.atari_env:AtariEnv",
                           vector_entry_point="cule.atari_env:make_vec", kwargs=dict(game=game, **V5))
