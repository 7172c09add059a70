"""AtariVectorEnv: ale-py's vector env over cule's emulator, returning torch tensors.

It takes the arguments of ``ale_py.vector.AtariVectorEnv`` 0.12.1 (same
names, same defaults, same meaning) plus ``device``, ``reset_mode``, ``mode``
and ``difficulty``, and behaves as it does: the same observations (palette,
max-pool, OpenCV INTER_AREA resize, frame stack), rewards, terminations,
truncations, lives and frame counters for the same seeds. The whole pipeline
runs in the C++ backend; a step costs O(1) Python work for any number of
environments.
"""
from __future__ import annotations

import collections
import warnings
import weakref
from typing import Any

import gymnasium
import numpy as np
import torch
from gymnasium.spaces import Box, Discrete
from gymnasium.vector import AutoresetMode, VectorEnv

from . import _core, backends
from . import state as state_format
from .backends.cpu import make_emulator
from .errors import StateError, UnknownRomWarning
from .games import BARE_GAME, game_info
from .palettes import palette_for
from .roms import load_rom

_RESET_MODES = ("ale", "cache")
# The step outputs that are not in gymnasium's (obs, rewards, terminated, truncated) go to info.
_INFO_OUTPUTS = tuple(name for name in _core.step_outputs if name not in ("rewards", "terminated", "truncated"))
_FIRE = 1
_MAX_SEED = 2**31 - 1  # ALE's random_seed is a C int; -1 means "keep"
_NO_IDS = np.empty(0, np.int32)
_NO_IDS.flags.writeable = False


def _autoreset_mode(value) -> AutoresetMode:
    if isinstance(value, AutoresetMode):
        mode = value
    else:
        try:
            mode = AutoresetMode(value)
        except ValueError:
            mode = None
    if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
        raise ValueError(f"autoreset_mode must be AutoresetMode.NEXT_STEP ('NextStep') or SAME_STEP ('SameStep'), "
                         f"got {value!r}")
    return mode


def _check_arguments(*, num_envs, frameskip, stack_num, batch_size, num_threads, noop_max, reset_cache_size,
                     repeat_action_probability, reset_mode, continuous) -> None:
    """The checks of the constructor's arguments that need no ROM, in the order their errors take."""
    # Upper bounds: what the C++ fields hold (int32), and for the start cache what a seeded reset rebuilds in time
    # (each entry is ALE's reset sequence, some 6 ms and 120 KB).
    # (num_envs and batch_size are bounded by the memory estimate.)
    for name, value, low, high in (("num_envs", num_envs, 1, None), ("frameskip", frameskip, 1, 1 << 16),
                                   ("stack_num", stack_num, 1, 1 << 10), ("batch_size", batch_size, 0, None),
                                   ("num_threads", num_threads, 0, 1 << 12), ("noop_max", noop_max, 0, 2**31 - 1),
                                   ("reset_cache_size", reset_cache_size, 1, 10_000)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
        if high is not None and value > high:
            raise ValueError(f"{name} must be at most {high}, got {value!r}")
    if batch_size > num_envs:
        raise ValueError(f"batch_size ({batch_size}) cannot exceed num_envs ({num_envs})")
    if not 0.0 <= repeat_action_probability <= 1.0:
        raise ValueError(f"repeat_action_probability must be in [0, 1], got {repeat_action_probability!r}")
    if reset_mode not in _RESET_MODES:
        raise ValueError(f"reset_mode must be one of {_RESET_MODES}, got {reset_mode!r}")
    if continuous:
        raise NotImplementedError("continuous actions are not supported; use discrete actions "
                                  "(full_action_space=True gives ALE's legal action set)")


def _checked_device(device) -> torch.device:
    device = torch.device(device)
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda[:N]', got {str(device)!r}")
    if device.type == "cuda":
        from .backends.cuda import check_cuda
        check_cuda(device)
    return device


def _check_game_options(unit: str, info: dict, mode, difficulty) -> None:
    for name, value, key in (("mode", mode, "modes"), ("difficulty", difficulty, "difficulties")):
        # ALE only checks a difficulty that is asked for (backgammon lists only 3, yet starts at 0).
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))
                                  or value not in info[key]):
            raise ValueError(f"{unit} has {key} {info[key]}, not {value!r}; leave {name}=None for the default")


class AtariVectorEnv(VectorEnv):
    """A batch of ALE games stepped together; everything returned is a torch tensor on ``device``.

    Args (ale-py's names and defaults, see ``ale_py.vector.AtariVectorEnv``):
        game: ALE game id ("pong"), gymnasium name ("ALE/Pong-v5") or ROM path.
            A ROM that is none of ALE's games (by md5 or file name) runs as
            a bare console: reward 0, never terminated, all 18 actions, mode
            0; an UnknownRomWarning names its md5.
        num_envs: number of environments.
        batch_size: environments returned per ``recv()``; 0 (default) or
            ``num_envs`` steps all of them together. Smaller batches run
            asynchronously: ``send()`` starts stepping the environments of the
            last batch in the background and ``recv()`` returns the next
            ``batch_size`` environments in a fixed round-robin order
            (``info["env_id"]`` says which), so runs are reproducible.
        num_threads: CPU threads stepping the environments (0: all cores).
        thread_affinity_offset: accepted for compatibility; threads are not pinned.
        max_num_frames_per_episode: truncation after this many emulated frames
            of an episode (0 or None: never).
        repeat_action_probability: sticky actions, drawn from each environment's
            own ALE random stream.
        full_action_space: ALE's legal action set (getLegalActionSet: all 18
            actions for every game but skiing and lost_luggage, which have 9)
            instead of the game's minimal set.
        continuous, continuous_action_threshold: not supported (raises).
        autoreset_mode: ``NextStep``: an environment whose episode ended is
            reset by the next step, which ignores its action and returns the
            new episode's first observation with reward 0. ``SameStep``: it is
            reset within the step that ended it; the step returns the new
            episode's observation and ``info["final_obs"]`` the last one.
        img_height, img_width: observation size, shrunk from the 210x160
            (PAL: 250x160) screen with OpenCV's INTER_AREA (None: native).
        grayscale: ALE's grayscale table instead of RGB (then [..., 3]).
        stack_num: frames stacked in each observation, oldest first.
        frameskip: emulated frames per step; rewards are summed.
        maxpool: observe the pixel-wise max of the last two frames of a step.
        noop_max: on reset, a random number of NOOP frames in [0, noop_max).
        episodic_life: a lost life ends the episode (and resets the game).
        life_loss_info: a lost life sets ``terminated`` without a reset.
        reward_clipping: each step's reward clipped to -1, 0, 1.
        use_fire_reset: press FIRE once on reset when FIRE is in the action set.
    cule's own:
        device: torch device of the returned tensors and of the emulator ("cpu", "cuda" or "cuda:N").
        reset_mode: "ale" runs ALE's whole reset sequence (reset_game, FIRE,
            no-ops) at every reset, exactly as ale-py. "cache" (CuLE's scheme)
            records ``reset_cache_size`` start states at each seeded reset
            (entry k: ALE's reset followed by k % noop_max no-ops) and starts
            every episode from one of them, picked at random per environment:
            resets cost a copy instead of ~100 emulated frames.
        reset_cache_size: start states kept by reset_mode="cache" (default 30).
        mode, difficulty: game mode and difficulty (default: the game's defaults).
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __new__(cls, game=None, *args, **kwargs):
        # Several games (a list or a dict of counts) make a mixed batch (cule.mixed).
        if cls is AtariVectorEnv and isinstance(game, (list, tuple, dict)):
            from .mixed import MixedAtariVectorEnv
            return super().__new__(MixedAtariVectorEnv)
        return super().__new__(cls)

    def __init__(
        self,
        game: str,
        num_envs: int,
        *,
        batch_size: int = 0,
        num_threads: int = 0,
        thread_affinity_offset: int = -1,
        max_num_frames_per_episode: int | None = 108000,
        repeat_action_probability: float = 0.0,
        full_action_space: bool = False,
        continuous: bool = False,
        continuous_action_threshold: float = 0.5,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        img_height: int | None = 84,
        img_width: int | None = 84,
        grayscale: bool = True,
        stack_num: int = 4,
        frameskip: int = 4,
        maxpool: bool = True,
        noop_max: int = 30,
        episodic_life: bool = False,
        life_loss_info: bool = False,
        reward_clipping: bool = True,
        use_fire_reset: bool = True,
        device: str | torch.device = "cpu",
        reset_mode: str = "ale",
        reset_cache_size: int = 30,
        mode: int | None = None,
        difficulty: int | None = None,
        _gymnasium: bool = False,
        _shim: bool = False,
        _action_set: np.ndarray | None = None,
    ):
        self.emulator = None  # set first: __del__ runs even when a check below raises
        _check_arguments(num_envs=num_envs, frameskip=frameskip, stack_num=stack_num, batch_size=batch_size,
                         num_threads=num_threads, noop_max=noop_max, reset_cache_size=reset_cache_size,
                         repeat_action_probability=repeat_action_probability, reset_mode=reset_mode,
                         continuous=continuous)
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self._same_step = self.autoreset_mode == AutoresetMode.SAME_STEP
        self.device = _checked_device(device)
        _estimate_memory(int(num_envs), int(stack_num), img_height or 250, img_width or 160, 1 if grayscale else 3,
                         int(reset_cache_size) if reset_mode == "cache" else 0)
        unit, info = self._load_game(game, mode, difficulty, full_action_space)

        self.num_envs = int(num_envs)
        self.batch_size = int(batch_size) or self.num_envs
        self.num_threads = int(num_threads)
        self.frameskip = int(frameskip)
        self.stack_num = int(stack_num)
        self.grayscale = bool(grayscale)
        self._gymnasium = _gymnasium
        limit = int(max_num_frames_per_episode) if max_num_frames_per_episode and max_num_frames_per_episode > 0 else 0
        if limit > 2**31 - 1:
            raise ValueError(f"max_num_frames_per_episode must be at most {2**31 - 1} (or None/0: no limit), "
                             f"got {max_num_frames_per_episode!r}")
        self._make_emulator(repeat_action_probability, limit, img_height, img_width)
        # The vector env's settings (cule._core.vector_options), named once: they configure the emulator
        # and, with what else decides a saved state's meaning (everything but where and how fast the env
        # runs), key its saved states (cule.state).
        settings = dict(
            frameskip=self.frameskip, stack_num=self.stack_num, img_height=self.img_height,
            img_width=self.img_width, grayscale=self.grayscale, maxpool=bool(maxpool), noop_max=int(noop_max),
            fire_reset=bool(use_fire_reset), has_fire=_FIRE in self.action_set, episodic_life=bool(episodic_life),
            life_loss_info=bool(life_loss_info), reward_clipping=bool(reward_clipping),
            max_episode_steps=2**31 - 1 if (_gymnasium or not limit) else limit,
            same_step=self._same_step, gymnasium=_gymnasium,
            default_mode=info["default_mode"], mode=self.mode, difficulty=self.difficulty,
            cache_size=int(reset_cache_size) if reset_mode == "cache" else 0)
        self._configure(settings, reset_mode=reset_mode, repeat_action_probability=repeat_action_probability,
                        limit=limit, full_action_space=full_action_space)
        if _action_set is not None:  # a mixed batch's: ALE's 18 actions, the illegal ones played as NOOP
            self.action_set = np.asarray(_action_set, dtype=np.int32)
        self._make_spaces()
        self._make_queues()
        self.backend = backends.create(self.emulator, self.device, backends.BackendSettings(
            action_set=self.action_set, obs_shape=self.single_observation_space.shape, frameskip=self.frameskip,
            num_threads=self.num_threads, background=self.batch_size != self.num_envs,
            start_cache=reset_mode == "cache", shim=_shim))

    # ---- construction: the steps of __init__, in its order

    def _load_game(self, game: str, mode: int | None, difficulty: int | None, full_action_space: bool):
        """Loads the ROM and resolves the game's mode, difficulty and action set; returns (game unit, its
        catalogue entry)."""
        self.rom = load_rom(game)
        self.game = self.rom.game  # None: not one of ALE's games
        if self.game is None:
            # ALE refuses such ROMs; cule runs them (homebrew, hacks, test carts), but says so. stacklevel 3:
            # the line that built the env.
            warnings.warn(f"ROM {self.rom.path!r} (md5 {self.rom.md5}) is not one of ALE's games: it runs as a bare "
                          f"console (reward always 0, never terminated, all 18 actions, mode 0)",
                          UnknownRomWarning, stacklevel=3)
        unit = self.game or BARE_GAME
        info = game_info(unit)
        _check_game_options(unit, info, mode, difficulty)
        self.mode = info["default_mode"] if mode is None else int(mode)
        self.difficulty = 0 if difficulty is None else int(difficulty)
        # ALE's getLegalActionSet (all 18 but for a few games) or getMinimalActionSet.
        self.action_set = np.array(info["legal_actions"] if full_action_space else info["minimal_actions"],
                                   dtype=np.int32)
        return unit, info

    def _make_emulator(self, repeat_action_probability: float, limit: int, img_height: int | None,
                       img_width: int | None) -> None:
        """The host batch, and the observation size (None: the screen's)."""
        # ale-py's vector env counts the episode's frames itself with ALE's own
        # limit off; gymnasium's AtariEnv uses ALE's limit.
        self.emulator = make_emulator(self.rom, self.num_envs, repeat_action_probability=repeat_action_probability,
                                      max_num_frames_per_episode=limit if self._gymnasium else 0)
        self.screen_height = self.emulator.screen_height
        self.img_height = self.screen_height if img_height is None else int(img_height)
        self.img_width = 160 if img_width is None else int(img_width)

    def _configure(self, settings: dict, *, reset_mode: str, repeat_action_probability: float, limit: int,
                   full_action_space: bool) -> None:
        """Configures the emulator's vector pipeline with `settings` and keys the saved states."""
        rgb, gray = palette_for(self.emulator.is_pal)
        self.emulator.configure_vector(rgb, gray, **settings)
        self.reset_mode = reset_mode
        self._state_name = self.game or self.rom.md5
        self._state_key = state_format.state_key(dict(
            settings, rom=self.rom.md5, cart=self.emulator.cart, layout=self.emulator.state_bytes(True),
            repeat_action_probability=float(repeat_action_probability), max_frames=limit,
            autoreset=self.autoreset_mode.value, reset_mode=reset_mode, full_action_space=bool(full_action_space)))

    def _make_spaces(self) -> None:
        """gymnasium's observation and action spaces, of one environment and of a batch."""
        frame = (self.img_height, self.img_width) + (() if self.grayscale else (3,))
        self._frame_shape = frame if self._gymnasium else (self.stack_num,) + frame
        self.single_observation_space = Box(low=0, high=255, shape=self._frame_shape, dtype=np.uint8)
        self.single_action_space = Discrete(len(self.action_set))
        self._observation_space = None  # built when first asked for (observation_space)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, self.batch_size)

    @property
    def observation_space(self) -> Box:
        """The batch's observation space, built when first asked for: at tens of thousands of environments
        gymnasium's batch_space takes seconds and gigabytes (bounds arrays the size of the batch's
        observations)."""
        if self._observation_space is None:
            self._observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space,
                                                                         self.batch_size)
        return self._observation_space

    @observation_space.setter
    def observation_space(self, space) -> None:
        self._observation_space = space

    def _make_queues(self) -> None:
        """The bookkeeping of batches: which environments were returned, are ready, or still stepping."""
        self._loaded = np.zeros(self.num_envs, dtype=bool)  # powered on by a seeded reset
        self._issued: dict[int, tuple] = {}                  # rows clone_state() handed out (_issue)
        self._last_ids: np.ndarray | None = None            # env ids of the last batch returned
        # ids of the stepped environments not yet returned, oldest first, in int32 chunks
        self._ready: collections.deque[np.ndarray] = collections.deque()
        # pending: (future, ids) of steps left running in the background, oldest first
        self._pending: collections.deque[tuple[Any, np.ndarray]] = collections.deque()

    # ---- gymnasium VectorEnv interface

    def reset(self, *, seed: int | np.ndarray | list | None = None, options: dict[str, Any] | None = None):
        """Resets the environments; returns (observations, info).

        ``seed``: an int seeds the reset environments with consecutive values
        from ``seed`` (ALE's random_seed and the no-op RNG, as ale-py does); an
        array gives one seed per reset environment; None keeps each console and
        RNG (the first reset then draws fresh seeds). ``options["reset_mask"]``
        (bool [num_envs]) resets only some environments; the others report
        their current observation and info. Partial resets need
        ``batch_size == num_envs`` and a preceding full reset.
        """
        self._check_open()
        ids = np.arange(self.num_envs, dtype=np.int32)
        unknown = set(options or ()) - {"reset_mask"}
        if unknown:  # ale-py's vector env reads reset_mask alone; anything else would be ignored without a word
            raise ValueError(f"reset() knows the option 'reset_mask' only, got {sorted(unknown)}")
        if options and "reset_mask" in options:
            mask = options["reset_mask"]
            if isinstance(mask, torch.Tensor):
                mask = mask.cpu().numpy()
            if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
                raise TypeError(f"reset_mask must be a boolean array, got {type(mask).__name__} "
                                f"with dtype {getattr(mask, 'dtype', None)}")
            if mask.shape != (self.num_envs,):
                raise ValueError(f"reset_mask must have shape {(self.num_envs,)}, got {mask.shape}")
            ids = np.flatnonzero(mask).astype(np.int32)
        partial = len(ids) != self.num_envs
        if partial and self._last_ids is None:
            raise RuntimeError(f"the first reset() must reset every environment (got {len(ids)} of {self.num_envs})")
        if partial and self.batch_size != self.num_envs:
            raise ValueError(f"partial resets need batch_size == num_envs (got batch_size={self.batch_size}, "
                             f"num_envs={self.num_envs})")
        seeds = self._reset_seeds(seed, len(ids))
        fresh = (seeds < 0) & ~self._loaded[ids]
        if fresh.any():  # never powered on: draw seeds as ale-py's random_device would
            seeds[fresh] = np.random.SeedSequence().generate_state(int(fresh.sum())) & _MAX_SEED
        if self._gymnasium:  # gymnasium's AtariEnv: SeedSequence(seed) -> (numpy seed, ALE seed)
            seeds = np.array([np.random.SeedSequence(int(s)).generate_state(2)[1] if s >= 0 else -1 for s in seeds],
                             dtype=np.int64)
        self._drain()
        self.backend.check_deferred()
        self.backend.run(ids, None, seeds, True)
        self._loaded[ids] = True
        if not partial:
            self._ready = collections.deque([ids])
            out = self._take_batch()
        else:
            out = self._gather(np.arange(self.num_envs, dtype=np.int32))
        obs, _, _, _, info = out
        return obs, info

    def step(self, actions):
        """Steps the last batch's environments; returns (obs, rewards, terminated, truncated, info).

        ``actions`` (int, [batch_size], torch or numpy) index the action set.
        rewards are int32, terminated/truncated bool, info holds env_id, lives,
        frame_number, episode_frame_number (int32) and, in SameStep mode when
        an episode ended, final_obs.
        """
        self.send(actions)
        return self.recv()

    def send(self, actions):
        """Starts stepping the environments of the last batch returned, one action each."""
        self._check_open()
        if self._last_ids is None:
            raise RuntimeError("call reset() before step() or send()")
        ale_actions = self.backend.actions(actions, self.batch_size)
        ids = self._last_ids
        self._last_ids = _NO_IDS  # until the next recv(), no batch awaits actions
        job = self.backend.run(ids, ale_actions, None, False)
        if job is None:
            self._ready.append(ids)
        else:
            self._pending.append((job, ids))

    def recv(self):
        """The next batch_size environments' (obs, rewards, terminated, truncated, info)."""
        self._check_open()
        while sum(map(len, self._ready)) < self.batch_size:
            if not self._pending:
                raise RuntimeError("recv() without a matching send()")
            job, ids = self._pending.popleft()
            job.result()
            self._ready.append(ids)
        return self._take_batch()

    def close(self, **kwargs):
        if self.emulator is not None:
            self._drain()
            self.backend.close()
        self.emulator = None

    # ---- raw access (each environment's ALE state)

    def get_ram(self) -> torch.Tensor:
        """RIOT RAM, uint8 [N, 128], as ALEInterface.getRAM()."""
        self._check_open()
        self._drain()
        return self.backend.ram()

    def get_screen(self) -> torch.Tensor:
        """Palette indices, uint8 [N, H, 160], as ALEInterface.getScreen()."""
        self._check_open()
        self._drain()
        return self.backend.screens()[0]

    def get_screen_rgb(self) -> torch.Tensor:
        """RGB, uint8 [N, H, 160, 3], as ALEInterface.getScreenRGB()."""
        screen = self.get_screen().cpu().numpy()  # first: it checks that the env is open
        rgb, _ = palette_for(self.emulator.is_pal)
        return torch.from_numpy(rgb[screen]).to(self.device)

    def lives(self) -> torch.Tensor:
        self._check_open()
        self._drain()
        return self.backend.screens()[1]

    def get_action_set(self) -> np.ndarray:
        """ALE action ids of the action indices."""
        return self.action_set.copy()

    # ---- environment states: clone, restore, fork

    def clone_state(self, ids=None, *, include_rng: bool = True) -> torch.Tensor:
        """The states of environments `ids` (default: all), uint8 [len(ids), state bytes] on ``device``.

        A row holds everything that decides an environment's future: console
        and cartridge, ALE's state and frame counters, the sticky-action RNG
        (left out with ``include_rng=False``, as ALE's cloneState), the reset
        no-op RNG, the frame buffers, the observation stack and the last
        step's results, behind a header naming the game, options and format
        (cule.state). restore_state() takes the rows back, here or in another
        env built with the same arguments; torch.save keeps them. On a GPU the
        states never leave it. ``ids``: an int, a sequence, or an array of ints.
        """
        return self._clone_rows(self._state_ids(ids, "ids"), bool(include_rng))

    def restore_state(self, states, ids=None) -> None:
        """Puts states from clone_state() back: row i into environment ids[i] (default: all, one row each).

        The next step continues as the cloned environment would have, bit for
        bit. Rows without the sticky-action RNG leave the environment's own.
        Rows of another game, other options or another format version raise
        StateError, and nothing changes.
        """
        ids = self._state_ids(ids, "ids")
        if len(np.unique(ids)) != len(ids):
            raise ValueError("ids lists an environment twice: one row each")
        rows = state_format.as_rows(states)
        if rows.shape[0] != len(ids):
            raise StateError(f"{rows.shape[0]} state row(s) for {len(ids)} environment(s): pass one row per id")
        self._restore_rows(ids, rows)
        self._loaded[ids] = True

    def copy_state(self, src_ids, dst_ids, *, include_rng: bool = True) -> None:
        """Forks: environment src_ids[i]'s state onto dst_ids[i], without the states leaving the device.

        An environment cannot be both a source and a destination in one call,
        nor a destination twice (one source may feed many). With
        ``include_rng=False`` each destination keeps its sticky-action RNG,
        so the forks draw different sticky actions.
        """
        src = self._state_ids(src_ids, "src_ids")
        dst = self._state_ids(dst_ids, "dst_ids")
        if len(src) == 1 and len(dst) > 1:
            src = np.repeat(src, len(dst))
        if len(src) != len(dst):
            raise ValueError(f"src_ids ({len(src)}) and dst_ids ({len(dst)}) must pair up (or src_ids be one id)")
        if len(np.unique(dst)) != len(dst):
            raise ValueError("dst_ids lists an environment twice")
        if np.intersect1d(src, dst).size:
            raise ValueError(f"environments {np.intersect1d(src, dst).tolist()} are both sources and destinations; "
                             f"fork in two calls")
        self.backend.copy_states(src, dst, bool(include_rng))
        self._loaded[dst] = True

    def _clone_rows(self, ids: np.ndarray, with_rng: bool) -> torch.Tensor:
        """clone_state() of validated ids."""
        rows_shape = (len(ids), state_format.HEADER_BYTES + self.emulator.state_bytes(with_rng))
        head = state_format.header(self._state_name, self._state_key, rows_shape[1] - state_format.HEADER_BYTES,
                                   with_rng)
        rows = torch.empty(rows_shape, dtype=torch.uint8, device=self.device)
        rows[:, :state_format.HEADER_BYTES] = torch.from_numpy(head).to(self.device)
        state_format.set_digests(rows, self.backend.save_states(ids, rows, state_format.HEADER_BYTES, with_rng))
        return self._issue(rows)

    def _issue(self, rows: torch.Tensor) -> torch.Tensor:
        """Notes rows that clone_state() hands out: restored unchanged (the same tensor, its version counter as it
        was), they skip the digest pass, the one check that reads the whole payload."""
        key = id(rows)
        self._issued[key] = (weakref.ref(rows, lambda _, key=key, issued=self._issued: issued.pop(key, None)),
                             rows._version)
        return rows

    def _is_issued(self, rows: torch.Tensor) -> bool:
        ref, version = self._issued.get(id(rows), (None, None))
        return ref is not None and ref() is rows and rows._version == version

    def _check_rows(self, rows: torch.Tensor, trusted: bool) -> bool:
        """Checks rows before anything is restored: headers, then every payload's digest (unless `trusted`) and the
        fields that index memory or bound loops. Returns whether they hold the sticky-action RNG; raises
        StateError."""
        with_rng = state_format.read_headers(rows, self._state_name, self._state_key, self.emulator.state_bytes)
        faults = self.backend.check_states(rows, state_format.HEADER_BYTES, with_rng,
                                           None if trusted else state_format.digests(rows))
        state_format.raise_faults(faults, self._state_name)
        return with_rng

    def _restore_rows(self, ids: np.ndarray, rows: torch.Tensor) -> None:
        """restore_state() of validated ids, one row each: checks every row before anything changes."""
        trusted = self._is_issued(rows)
        rows = rows.to(self.device)
        with_rng = self._check_rows(rows, trusted)
        self.backend.load_states(ids, rows, state_format.HEADER_BYTES, with_rng)

    def _state_ids(self, ids, name: str) -> np.ndarray:
        """Validated environment ids (int32) for the state methods; whole batches only, so none is stepping."""
        self._check_open()
        if self._last_ids is None:
            raise RuntimeError("call reset() before cloning, restoring or copying states")
        if self.batch_size != self.num_envs:
            raise ValueError(f"states need batch_size == num_envs (got batch_size={self.batch_size}, "
                             f"num_envs={self.num_envs})")
        if ids is None:
            return np.arange(self.num_envs, dtype=np.int32)
        if isinstance(ids, torch.Tensor):
            ids = ids.cpu().numpy()
        array = np.atleast_1d(np.asarray(ids))
        if array.size == 0:
            raise ValueError(f"{name} is empty: name at least one environment")
        if array.ndim != 1 or not (np.issubdtype(array.dtype, np.integer) and array.dtype != np.bool_):
            raise TypeError(f"{name} must be an int or a 1-D sequence of ints, got {ids!r}")
        if array.size and (array.min() < 0 or array.max() >= self.num_envs):
            raise ValueError(f"{name} must lie in [0, {self.num_envs - 1}], got {array.min()}..{array.max()}")
        return array.astype(np.int32)

    # ---- internals

    def _check_open(self):
        if self.emulator is None:
            raise RuntimeError("this AtariVectorEnv is closed; create a new one")

    def _drain(self):
        """Waits for steps still running in the background (async mode)."""
        while self._pending:
            job, ids = self._pending.popleft()
            job.result()
            self._ready.append(ids)

    def _reset_seeds(self, seed, count: int) -> np.ndarray:
        if seed is None:
            return np.full(count, -1, dtype=np.int64)  # keep each console and RNG
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            if not 0 <= int(seed) <= _MAX_SEED - (count - 1):
                raise ValueError(f"seeds must lie in [0, {_MAX_SEED}] (ALE's random_seed is a C int): seed "
                                 f"{seed!r} seeds {seed!r} .. {int(seed) + count - 1}")
            return np.arange(int(seed), int(seed) + count, dtype=np.int64)
        if isinstance(seed, (list, tuple, np.ndarray, torch.Tensor)):
            seeds = np.asarray(seed.cpu() if isinstance(seed, torch.Tensor) else seed)
            if seeds.shape != (count,) or not np.issubdtype(seeds.dtype, np.integer):
                raise ValueError(f"seed must be an int or {count} integer seeds (one per environment reset), "
                                 f"got shape {seeds.shape} dtype {seeds.dtype}")
            # compared before any conversion: a uint64 above 2**63 must not wrap to a negative int64
            if seeds.size and (seeds.min() < 0 or seeds.max() > _MAX_SEED):
                raise ValueError(f"seeds must lie in [0, {_MAX_SEED}] (ALE's random_seed is a C int), "
                                 f"got {seeds.min()}..{seeds.max()}")
            return seeds.astype(np.int64)
        raise TypeError(f"seed must be None, an int or an array of ints, got {type(seed).__name__}")

    def _take_batch(self):
        """The next batch_size ready environments, joining or splitting the chunks they were stepped in."""
        ids = self._ready.popleft()
        while len(ids) < self.batch_size:
            ids = np.concatenate((ids, self._ready.popleft()))
        if len(ids) > self.batch_size:
            self._ready.appendleft(ids[self.batch_size:])
            ids = ids[:self.batch_size]
        self._last_ids = ids
        return self._gather(ids)

    def _gather(self, ids: np.ndarray):
        r = self.backend.gather(ids, self._same_step)
        info = {"env_id": r.env_id}
        for name in _INFO_OUTPUTS:
            info[name] = getattr(r, name)
        if r.final_obs is not None:
            info["final_obs"] = r.final_obs
        return r.obs, r.rewards, r.terminated, r.truncated, info

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _bytes_per_env(stack: int, height: int, width: int, channels: int) -> int:
    """Upper bound of one environment's memory: console and ALE state with its snapshot and RNGs (9 KB,
    16 KB allowed), two TIA frames and three processed frames at the largest (PAL, RGB) size (the third
    is the resize's memo, with one observation), and three observation stacks (the ring, SameStep's final
    observations, the batch returned)."""
    return 16_000 + 3 * 250 * 160 * 3 + 2 * 250 * 160 + (3 * stack + 1) * height * width * channels


def _estimate_memory(num_envs: int, stack: int, height: int, width: int, channels: int, cache_size: int = 0):
    """Refuses batches that would not fit in memory before allocating anything (reset_mode "cache"'s start
    states, one console and two screens each, included)."""
    import os
    per_env = _bytes_per_env(stack, height, width, channels)
    need = num_envs * per_env + cache_size * (2 * 250 * 160 + 2 * height * width * channels + 1024)
    try:
        available = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return
    if need > available:
        raise MemoryError(f"{num_envs} environments need about {need / 2**30:.1f} GiB "
                          f"({per_env / 2**10:.0f} KiB each) but this machine has {available / 2**30:.1f} GiB; "
                          f"use fewer environments")
