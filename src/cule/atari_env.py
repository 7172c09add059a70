"""gymnasium's registry: ``gymnasium.make("cule/Pong-v5")`` and ``gymnasium.make_vec("cule/Pong-v5", num_envs=N)``.

``import cule`` registers ``cule/<Game>-v5`` for the games ale-py registers
as ``ALE/<Game>-v5``, with the same settings (frameskip 4, sticky actions
0.25, the minimal action set, a 108,000-frame cap):

- ``gymnasium.make`` gives ``AtariEnv``, one environment with numpy outputs,
  equal to ale-py's ``AtariEnv`` step for step (observation, reward,
  terminated, truncated, lives and frame counters) for the same seed; its
  ``ale`` (``AleView``) is the part of ``ale_py.ALEInterface`` that
  gymnasium's ``AtariPreprocessing`` and Stable-Baselines3's Atari wrappers
  read;
- ``gymnasium.make_vec`` gives ``cule.AtariVectorEnv`` with those settings
  and ale-py's vector-env preprocessing (84x84 grey, stack 4), as ale-py's
  ``make_vec`` gives its ``AtariVectorEnv``; extra keyword arguments go to it
  (``device="cuda"``, ``batch_size``, ...).

It also registers ``cule/<Game>NoFrameskip-v4`` (frameskip 1, no sticky
actions, the same cap), the ids of the cleanrl and Stable-Baselines3 Atari
scripts, for every game; ale-py registers ``<Game>NoFrameskip-v4`` for 62 of
them.
"""
from __future__ import annotations

import gymnasium
import numpy as np
import torch
from gymnasium.spaces import Box
from gymnasium.utils import seeding

from .backends import INFO_OUTPUTS
from .games import ACTION_NAMES
from .make import make
from .roms import list_games
from .vector_env import AtariVectorEnv

NAMESPACE = "cule"
V5 = dict(repeat_action_probability=0.25, full_action_space=False, frameskip=4, max_num_frames_per_episode=108_000)
NO_FRAMESKIP_V4 = {**V5, "repeat_action_probability": 0.0, "frameskip": 1}


def env_name(game: str) -> str:
    """ale-py's name of a game id in an env id: "ms_pacman" -> "MsPacman"."""
    return game.title().replace("_", "")


class AtariEnv(gymnasium.Env):
    """One ALE game as ``gymnasium.make("ALE/<Game>-v5")`` gives it, emulated by cule, with numpy outputs.

    Args are ale-py's ``AtariEnv``'s: game (ALE id), mode, difficulty, obs_type ("rgb", "grayscale" or "ram"),
    frameskip (an int), repeat_action_probability, full_action_space, max_num_frames_per_episode (truncation,
    None: never), render_mode (None or "rgb_array"), continuous and continuous_action_threshold (actions
    (radius, theta, fire) as float32 [3], cule.continuous). Stochastic frameskip, sound and the "human" render
    mode are not supported (ValueError).

    ``reset(seed=s)`` seeds ALE as ale-py does (SeedSequence(s)'s second word); ``reset()`` starts a new episode
    on the same console and RNG. Stepping on after an episode ended starts the next one (cule's NextStep
    autoreset) where ale-py would keep playing the finished game: call reset() at the end, as gymnasium asks.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 30}

    def __init__(self, game: str, mode: int | None = None, difficulty: int | None = None, obs_type: str = "rgb",
                 frameskip: int = 4, repeat_action_probability: float = 0.25, full_action_space: bool = False,
                 max_num_frames_per_episode: int | None = None, render_mode: str | None = None,
                 continuous: bool = False, continuous_action_threshold: float = 0.5, sound_obs: bool = False,
                 **unsupported):
        if unsupported:
            raise TypeError(f"AtariEnv got unknown arguments {sorted(unsupported)}")
        self._arguments = dict(game=game, mode=mode, difficulty=difficulty, obs_type=obs_type, frameskip=frameskip,
                               repeat_action_probability=repeat_action_probability,
                               full_action_space=full_action_space,
                               max_num_frames_per_episode=max_num_frames_per_episode, render_mode=render_mode,
                               continuous=continuous, continuous_action_threshold=continuous_action_threshold)
        if sound_obs:
            raise ValueError("sound observations are not supported")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        if obs_type not in ("rgb", "grayscale", "ram"):
            raise ValueError(f"obs_type must be 'rgb', 'grayscale' or 'ram', got {obs_type!r}")
        if isinstance(frameskip, bool) or not isinstance(frameskip, (int, np.integer)):
            raise ValueError(f"frameskip must be an int (stochastic frameskip is not supported), got {frameskip!r}")
        self.render_mode, self.obs_type = render_mode, obs_type
        self._frameskip = int(frameskip)  # gymnasium's AtariPreprocessing asks for 1 here
        self.vector = make(game, 1, device="cpu", mode=mode, difficulty=difficulty,
                           obs_type="rgb" if obs_type == "ram" else obs_type, frameskip=int(frameskip),
                           repeat_action_probability=repeat_action_probability,
                           full_action_space=full_action_space, max_num_frames_per_episode=max_num_frames_per_episode,
                           num_threads=1, continuous=continuous, continuous_action_threshold=continuous_action_threshold)
        self.continuous = self.vector.continuous
        self.continuous_action_threshold = self.vector.continuous_action_threshold
        self.action_space = self.vector.single_action_space
        self.observation_space = (Box(0, 255, (128,), np.uint8) if obs_type == "ram"
                                  else self.vector.single_observation_space)
        self._started = False
        self.ale = AleView(self)

    def __getstate__(self) -> dict:
        """What copy.deepcopy and pickle keep, as they keep ale-py's AtariEnv: the arguments, the whole state with
        its RNG (clone_state) and np_random. The copy goes on as the original would, bit for bit."""
        self._check_open()
        return dict(arguments=self._arguments, spec=getattr(self, "spec", None), started=self._started,
                    state=self.clone_state(include_rng=True) if self._started else None, np_random=self._np_random,
                    np_random_seed=self._np_random_seed)

    def __setstate__(self, saved: dict) -> None:
        self.__init__(**saved["arguments"])
        self.spec, self._np_random, self._np_random_seed = saved["spec"], saved["np_random"], saved["np_random_seed"]
        if saved["state"] is not None:
            self.restore_state(saved["state"])

    def _check_open(self):
        if self.vector.backend is None:  # closed by close()
            raise RuntimeError("this AtariEnv is closed; make a new one (gymnasium.make)")

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self._check_open()
        super().reset(seed=seed)
        seeds = None
        if seed is not None:
            # ale-py's seed_game: the first word of SeedSequence(seed) seeds np_random (which gymnasium's
            # AtariPreprocessing draws its no-ops from), the second ALE
            seeds = tuple(int(w) for w in np.random.SeedSequence(seed).generate_state(n_words=2))
            self._np_random, self._np_random_seed = seeding.np_random(seeds[0])
        elif not self._started:
            seed = int(self.np_random.integers(0, 2**31 - 1))  # ale-py seeds its ALE at construction
        obs, info = self.vector.reset(seed=seed)
        self._started = True
        info = self._info(info)
        if seeds is not None:
            info["seeds"] = seeds
        return self._obs(obs), info

    def step(self, action):
        self._check_open()
        if not self._started:
            raise gymnasium.error.ResetNeeded("call reset() before step()")
        if self.continuous:  # ale-py takes any float32 [3], also outside its Box (a radius above 1 is stronger)
            actions = np.asarray(action)[None]  # its dtype and shape are checked with the vector env's words
        elif not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        else:
            actions = np.array([action], dtype=np.int64)
        r = self.vector._step_arrays(actions)
        return (self._obs(r.obs), float(r.rewards[0]), bool(r.terminated[0]), bool(r.truncated[0]),
                self._info(vars(r)))

    def render(self):
        self._check_open()
        if self.render_mode != "rgb_array":  # ale-py's AtariEnv refuses it too
            raise gymnasium.error.Error(f"render_mode is {self.render_mode!r}: make the env with "
                                        "render_mode='rgb_array' to render")
        return self.vector.get_screen_rgb()[0].numpy()

    def get_action_meanings(self) -> list[str]:
        return [ACTION_NAMES[a] for a in self.vector.action_set]

    def get_keys_to_action(self) -> dict[tuple[str, ...], int]:
        """Keys for gymnasium.utils.play, as ale-py's: w, s, a, d for up, down, left and right, space for FIRE and
        e for NOOP; a combined action presses its keys together."""
        if self.continuous:  # as ale-py's
            raise AttributeError("get_keys_to_action can't be provided for this Atari environment as continuous=True")
        keys = {"UP": "w", "DOWN": "s", "LEFT": "a", "RIGHT": "d", "FIRE": " "}
        mapping = {}
        for index, name in enumerate(self.get_action_meanings()):
            pressed, rest = [], "" if name == "NOOP" else name
            while rest:  # a name is its parts in the order up/down, left/right, fire
                part = next(p for p in keys if rest.startswith(p))
                pressed.append(keys[part])
                rest = rest[len(part):]
            mapping[tuple(pressed) or ("e",)] = index
        return mapping

    def clone_state(self, include_rng: bool = False) -> np.ndarray:
        """The environment's whole state as a uint8 row (cule.state's format; pickles, torch.save keeps it), as
        ale-py's clone_state: without the sticky-action RNG unless include_rng."""
        self._check_open()
        return self.vector.clone_state(include_rng=include_rng)[0].numpy()

    def restore_state(self, state) -> None:
        """Puts a clone_state() row back; the next steps continue as the cloned environment's (a row without the
        RNG keeps this environment's). A row of another game or options, or a damaged one, raises
        cule.StateError and changes nothing."""
        self._check_open()
        if not self._started:  # the vector env restores into a started environment (a row without the RNG then
            self.vector.reset(seed=int(self.np_random.integers(0, 2**31 - 1)))  # keeps this one's fresh RNG)
        self.vector.restore_state(torch.as_tensor(np.asarray(state, dtype=np.uint8))[None])
        self._started = True

    def close(self):
        self.vector.close()

    def _obs(self, obs) -> np.ndarray:
        return self.vector.get_ram()[0].numpy() if self.obs_type == "ram" else np.asarray(obs)[0]

    @staticmethod
    def _info(outputs) -> dict:
        """ale-py's info from the step's outputs by name (tensors at a reset, numpy arrays at a step)."""
        return {name: int(outputs[name][0]) for name in INFO_OUTPUTS}


class AleView:
    """``env.unwrapped.ale`` of a cule AtariEnv: the part of ``ale_py.ALEInterface`` that gymnasium's
    AtariPreprocessing and Stable-Baselines3's Atari wrappers read, on the env's one environment: lives, frame
    counters and game over as the last step or reset left them, the RAM, the screen in its three forms (into a
    given buffer, as ALEInterface fills one), the action sets and saved states. Actions go through env.step."""

    def __init__(self, env: AtariEnv):
        self._env = env

    def _output(self, name: str):
        self._env._check_open()
        return self._env.vector._drained().last_output(name)[0].item()

    def lives(self) -> int:
        return self._output("lives")

    def getFrameNumber(self) -> int:  # noqa: N802 (ALEInterface's names)
        return self._output("frame_number")

    def getEpisodeFrameNumber(self) -> int:  # noqa: N802
        return self._output("episode_frame_number")

    def game_over(self, with_truncation: bool = True) -> bool:
        return bool(self._output("terminated") or (with_truncation and self._output("truncated")))

    def game_truncated(self) -> bool:
        return bool(self._output("truncated"))

    def getRAM(self, buffer: np.ndarray | None = None):  # noqa: N802
        self._env._check_open()
        return _filled(buffer, self._env.vector.get_ram()[0].numpy())

    def getScreen(self, buffer: np.ndarray | None = None):  # noqa: N802
        return _filled(buffer, self._screen())

    def getScreenRGB(self, buffer: np.ndarray | None = None):  # noqa: N802
        return _filled(buffer, self._env.vector.blocks[0].rgb(self._screen()))  # the game block's own palette

    def getScreenGrayscale(self, buffer: np.ndarray | None = None):  # noqa: N802
        return _filled(buffer, self._env.vector.blocks[0].gray(self._screen()))

    def getMinimalActionSet(self) -> np.ndarray:  # noqa: N802
        return self._env.vector.get_action_set()

    def getLegalActionSet(self) -> np.ndarray:  # noqa: N802
        return np.arange(len(ACTION_NAMES), dtype=self._env.vector.action_set.dtype)

    def cloneState(self, include_rng: bool = False) -> np.ndarray:  # noqa: N802
        return self._env.clone_state(include_rng=include_rng)

    def restoreState(self, state) -> None:  # noqa: N802
        self._env.restore_state(state)

    def _screen(self) -> np.ndarray:
        self._env._check_open()
        return self._env.vector.get_screen()[0].numpy()


def _filled(buffer: np.ndarray | None, value: np.ndarray):
    """ALEInterface's two forms of a read: the array, or None once `buffer` (of the array's shape, uint8) holds
    it."""
    if buffer is None:
        return value
    if not isinstance(buffer, np.ndarray) or buffer.dtype != np.uint8 or buffer.size != value.size:
        raise ValueError(f"the buffer must be a uint8 numpy array of {value.size} elements (shape {value.shape}), "
                         f"got {getattr(buffer, 'dtype', type(buffer).__name__)} of "
                         f"{getattr(buffer, 'shape', '?')}")
    np.copyto(buffer, value.reshape(buffer.shape))  # in place, whatever the buffer's strides
    return None


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
        gymnasium.register(id=f"{NAMESPACE}/{env_name(game)}NoFrameskip-v4", entry_point="cule.atari_env:AtariEnv",
                           kwargs=dict(game=game, **NO_FRAMESKIP_V4))
