"""AtariVectorEnv: ale-py's vector env over cule's emulator, returning torch tensors.

It takes the arguments of ``ale_py.vector.AtariVectorEnv`` 0.12.1 (same
names, same defaults, same meaning) plus ``device``, ``reset_mode``, ``mode``
and ``difficulty``, and behaves as it does: the same observations (palette,
max-pool, OpenCV INTER_AREA resize, frame stack), rewards, terminations,
truncations, lives and frame counters for the same seeds. The whole pipeline
runs in the C++ backend; a step costs O(1) Python work for any number of
environments. Given several games, it is one batch of them all (cule.mixed).
"""
from __future__ import annotations

import numpy as np
import torch
from gymnasium.spaces import Box, Discrete
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import backends, checks, mixed
from . import continuous as continuous_module
from .batching import NO_IDS, BatchQueue
from .blocks import GameBlock, rgb_of
from .env_states import EnvStates

_ONE_GAME = ("rom", "game", "mode", "difficulty", "emulator", "screen_height")  # attributes of a one-game env


class AtariVectorEnv(VectorEnv):
    """A batch of ALE games stepped together; everything returned is a torch tensor on ``device``.

    Args (ale-py's names and defaults, see ``ale_py.vector.AtariVectorEnv``):
        game: ALE game id ("pong"), gymnasium name ("ALE/Pong-v5") or ROM path. A ROM that is none of ALE's
            games (by md5 or file name) runs as a bare console: reward 0, never terminated, all 18 actions,
            mode 0; an UnknownRomWarning names its md5. Several games (a list, or a dict of counts) make one
            mixed batch (cule.mixed).
        num_envs: number of environments (with a list of games: per game).
        batch_size: environments returned per ``recv()``; 0 (default) or ``num_envs`` steps all of them
            together. Smaller batches run asynchronously: ``send()`` starts stepping the environments of the
            last batch in the background and ``recv()`` returns the next ``batch_size`` environments in a fixed
            round-robin order (``info["env_id"]`` says which), so runs are reproducible.
        num_threads: CPU threads stepping the environments (0: all cores).
        thread_affinity_offset: accepted for compatibility; threads are not pinned.
        max_num_frames_per_episode: truncation after this many emulated frames of an episode (0 or None: never).
        repeat_action_probability: sticky actions, drawn from each environment's own ALE random stream.
        full_action_space: ALE's legal action set (getLegalActionSet: all 18 actions for every game but skiing
            and lost_luggage, which have 9) instead of the game's minimal set (None: the minimal set for one
            game, ALE's 18 actions for a mixed batch).
        continuous: each action is three floats (radius, theta, fire) in [0, 1] x [-pi, pi] x [0, 1]
            instead of an index: the joystick direction of (radius cos theta, radius sin theta) and fire, each
            axis and fire on when beyond ``continuous_action_threshold``; the radius is also the paddle
            strength (cule.continuous). Implies ALE's legal action set (``action_set``).
        continuous_action_threshold: see ``continuous``.
        autoreset_mode: ``NextStep``: an environment whose episode ended is reset by the next step, which ignores
            its action and returns the new episode's first observation with reward 0. ``SameStep``: it is reset
            within the step that ended it; the step returns the new episode's observation and
            ``info["final_obs"]`` the last one.
        img_height, img_width: observation size (1 to 4096 each), resized from the 210x160 (PAL: 250x160)
            screen with OpenCV's INTER_AREA, to the byte (None: native); larger sizes take OpenCV's bilinear
            branch, as in ale-py.
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
        outputs: "torch" (default) or "numpy": reset() and step() return numpy arrays, info's values too, as
            ale-py's vector env does, for code and wrappers written for numpy (gymnasium's
            wrappers.vector.RecordEpisodeStatistics); device "cpu" only, where the arrays are the tensors'
            memory.
        reset_mode: "ale" runs ALE's whole reset sequence (reset_game, FIRE, no-ops) at every reset, exactly as
            ale-py. "cache" (CuLE's scheme) records ``reset_cache_size`` start states at each seeded reset (entry
            k: ALE's reset followed by k % noop_max no-ops) and starts every episode from one of them, picked at
            random per environment: resets cost a copy instead of ~100 emulated frames.
        reset_cache_size: start states kept by reset_mode="cache" (default 30).
        mode, difficulty: game mode and difficulty (default: the game's defaults).
        translated: step the game through its own translated frame loop (cule.translate: a label per ROM byte
            the game was seen to run), compiled with the system's C++ compiler at first use (minutes) and kept
            in the user cache folder; the same results, bit for bit, with fewer mispredicted branches. CPU only;
            games of the mappers in cule.translate.TRANSLATABLE.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, game, num_envs: int | None = None, *, batch_size: int = 0, num_threads: int = 0,
                 thread_affinity_offset: int = -1, max_num_frames_per_episode: int | None = 108000,
                 repeat_action_probability: float = 0.0, full_action_space: bool | None = None, continuous: bool = False,
                 continuous_action_threshold: float = 0.5,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, img_height: int | None = 84,
                 img_width: int | None = 84, grayscale: bool = True, stack_num: int = 4, frameskip: int = 4,
                 maxpool: bool = True, noop_max: int = 30, episodic_life: bool = False, life_loss_info: bool = False,
                 reward_clipping: bool = True, use_fire_reset: bool = True, device: str | torch.device = "cpu",
                 outputs: str = "torch",
                 reset_mode: str = "ale", reset_cache_size: int = 30, mode: int | None = None,
                 difficulty: int | None = None, translated: bool = False, _gymnasium: bool = False,
                 _shim: bool | int | str = False):
        self.backend = None  # set first: __del__ runs even when a check below raises
        flags = dict(grayscale=grayscale, maxpool=maxpool, episodic_life=episodic_life, life_loss_info=life_loss_info,
                     reward_clipping=reward_clipping, use_fire_reset=use_fire_reset, continuous=continuous)
        threshold = continuous_module.check_threshold(continuous_action_threshold)
        if full_action_space is not None:  # None: the default set
            flags["full_action_space"] = full_action_space
        checks.check_types(flags=flags, img_height=img_height, img_width=img_width,
                           max_num_frames_per_episode=max_num_frames_per_episode,
                           thread_affinity_offset=thread_affinity_offset)
        several = isinstance(game, (list, tuple, dict))
        counts = mixed.game_counts(game, num_envs) if several else [(game, num_envs)]
        full_action_space = (mixed.check_options(mode, difficulty, full_action_space) if several
                             else bool(full_action_space) or bool(continuous))  # ale-py: continuous or full
        self.num_envs = sum(c for _, c in counts) if several else num_envs
        checks.check_arguments(num_envs=self.num_envs, frameskip=frameskip, stack_num=stack_num,
                               batch_size=batch_size, num_threads=num_threads, noop_max=noop_max,
                               reset_cache_size=reset_cache_size, repeat_action_probability=repeat_action_probability,
                               reset_mode=reset_mode)
        self.continuous, self.continuous_action_threshold = bool(continuous), threshold
        self.autoreset_mode = checks.autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.device = checks.checked_device(device)
        if outputs not in ("torch", "numpy"):
            raise ValueError(f"outputs must be 'torch' or 'numpy', got {outputs!r}")
        if outputs == "numpy" and self.device.type != "cpu":
            raise ValueError(f"outputs='numpy' needs device='cpu' (on {self.device} the results would be copied to "
                             "the host every step): keep torch outputs there")
        self._numpy = outputs == "numpy"
        cache_size = int(reset_cache_size) if reset_mode == "cache" else 0
        checks.estimate_memory(int(self.num_envs), int(stack_num), img_height or 250, img_width or 160,
                               1 if grayscale else 3, cache_size)
        self.num_envs, self.batch_size = int(self.num_envs), int(batch_size) or int(self.num_envs)
        self.num_threads, self.frameskip, self.stack_num = int(num_threads), int(frameskip), int(stack_num)
        self.grayscale, self.reset_mode, self._gymnasium = bool(grayscale), reset_mode, _gymnasium
        self._same_step = self.autoreset_mode == AutoresetMode.SAME_STEP
        limit = checks.frame_limit(max_num_frames_per_episode)
        # The vector env's settings (cule._core.vector_options) every block shares; with what else decides a
        # saved state's meaning (everything but where and how fast the env runs), they key its saved states.
        settings = dict(frameskip=self.frameskip, stack_num=self.stack_num, grayscale=self.grayscale,
                        maxpool=bool(maxpool), noop_max=int(noop_max), fire_reset=bool(use_fire_reset),
                        episodic_life=bool(episodic_life), life_loss_info=bool(life_loss_info),
                        reward_clipping=bool(reward_clipping),
                        max_episode_steps=2**31 - 1 if (_gymnasium or not limit) else limit,
                        same_step=self._same_step, gymnasium=_gymnasium, cache_size=cache_size)
        key = dict(repeat_action_probability=float(repeat_action_probability), max_frames=limit,
                   autoreset=self.autoreset_mode.value, reset_mode=reset_mode)
        # ale-py's vector env counts the episode's frames itself with ALE's own limit off; gymnasium's AtariEnv
        # uses ALE's limit
        self.blocks = [GameBlock(g, int(c), mode=mode, difficulty=difficulty, full_action_space=full_action_space,
                                 action_set=mixed.ALL_ACTIONS if several else None,
                                 repeat_action_probability=repeat_action_probability,
                                 emulator_limit=limit if _gymnasium else 0, img_height=img_height,
                                 img_width=img_width, settings=settings, key=key, warn_depth=2)
                       for g, c in counts]
        if translated:
            if self.device.type != "cpu" or _shim:
                raise ValueError(f"translated=True replaces the CPU backend's frame loop; device {self.device} "
                                 "runs the CUDA kernels: leave it False there")
            from . import translate
            for block in self.blocks:
                translate.use_library(block.emulator, translate.build(block.game or str(block.rom.path),
                                                                       log=translate.log_warning))
        first = self.blocks[0]
        mixed.check_shapes(self.blocks)
        self.img_height, self.img_width, self.action_set = first.img_height, first.img_width, first.action_set
        self._make_spaces()
        self._queue = BatchQueue(self.batch_size)
        self.backend = mixed.batch_backend(self.blocks, self.device, backends.BackendSettings(
            action_set=self.action_set, obs_shape=self.single_observation_space.shape, frameskip=self.frameskip,
            num_threads=self.num_threads, background=self.batch_size != self.num_envs,
            start_cache=reset_mode == "cache", shim=_shim,
            continuous_threshold=threshold if self.continuous else None))
        self._states = EnvStates(self.blocks, self.backend, self.device, self.num_envs)
        self._game_of = None  # info["game"] of each environment in a mixed batch
        if several:
            self.games = [b.name for b in self.blocks]
            part_of = getattr(self.backend, "part_of", None)  # one game's backend: all its own
            self._game_of = torch.from_numpy(np.zeros(self.num_envs, np.int32) if part_of is None
                                             else part_of).to(self.device)
        else:
            for name in _ONE_GAME:
                setattr(self, name, getattr(first, name))

    def _make_spaces(self) -> None:
        """gymnasium's observation and action spaces, of one environment and of a batch."""
        frame = (self.img_height, self.img_width) + (() if self.grayscale else (3,))
        self.single_observation_space = Box(0, 255, frame if self._gymnasium else (self.stack_num, *frame), np.uint8)
        self.single_action_space = (Box(*continuous_module.action_space_bounds(), (3,), np.float32) if self.continuous
                                    else Discrete(len(self.action_set)))
        self._observation_space = None  # built when first asked for (observation_space)
        self.action_space = batch_space(self.single_action_space, self.batch_size)

    @property
    def observation_space(self) -> Box:
        """The batch's observation space, built when first asked for: at tens of thousands of environments
        gymnasium's batch_space takes seconds and gigabytes (bounds arrays the size of the batch's observations)."""
        if self._observation_space is None:
            self._observation_space = batch_space(self.single_observation_space, self.batch_size)
        return self._observation_space

    @observation_space.setter
    def observation_space(self, space) -> None:
        self._observation_space = space

    # ---- gymnasium VectorEnv interface

    def reset(self, *, seed: int | np.ndarray | list | None = None, options: dict | None = None):
        """Resets the environments; returns (observations, info).

        ``seed``: an int seeds the reset environments with consecutive values from ``seed`` (ALE's random_seed
        and the no-op RNG, as ale-py does); an array gives one seed per reset environment; None keeps each
        console and RNG (the first reset then draws fresh seeds). ``options["reset_mask"]`` (bool [num_envs])
        resets only some environments; the others report their current observation and info. Partial resets
        need ``batch_size == num_envs`` and a preceding full reset.
        """
        self._check_open()
        ids = checks.reset_mask(options, self.num_envs)
        partial = len(ids) != self.num_envs
        if partial and self._queue.last_ids is None:
            raise RuntimeError(f"the first reset() must reset every environment (got {len(ids)} of {self.num_envs})")
        if partial and self.batch_size != self.num_envs:
            raise ValueError(f"partial resets need batch_size == num_envs (got batch_size={self.batch_size}, "
                             f"num_envs={self.num_envs})")
        seeds = checks.reset_seeds(seed, self._states.loaded[ids], self._gymnasium)
        self._queue.drain()
        self.backend.check_deferred()
        self.backend.run(ids, None, seeds, True)
        self._states.loaded[ids] = True
        if partial:
            obs, _, _, _, info = self._gather(np.arange(self.num_envs, dtype=np.int32))
            return obs, info
        self._queue.restart(ids)
        obs, _, _, _, info = self._gather(self._queue.take())
        return obs, info

    def step(self, actions):
        """Steps the last batch's environments; returns (obs, rewards, terminated, truncated, info).

        ``actions`` (int, [batch_size], torch or numpy) index the action set; with ``continuous=True`` they are
        floats [batch_size, 3] (radius, theta, fire; float32 as ale-py asks, other float types are rounded to
        it). rewards are int32,
        terminated/truncated bool, info holds env_id, lives, frame_number, episode_frame_number (int32), in a
        mixed batch game, and in SameStep mode final_obs (see Backend.gather for when).
        """
        ids = self._queue.last_ids
        if self.batch_size == self.num_envs and ids is not None and ids is not NO_IDS and self.backend is not None:
            # Whole batches step in the caller: the queue would hand back the ids it was given, so its
            # bookkeeping (a few microseconds a step) is skipped.
            self.backend.run(ids, self.backend.actions(actions, self.batch_size), None, False)
            return self._gather(ids)
        self.send(actions)
        return self.recv()

    def send(self, actions):
        """Starts stepping the environments of the last batch returned, one action each."""
        self._check_open()
        if self._queue.last_ids is None:
            raise RuntimeError("call reset() before step() or send()")
        ale_actions = self.backend.actions(actions, self.batch_size)
        ids = self._queue.sending()
        self._queue.sent(ids, self.backend.run(ids, ale_actions, None, False))

    def recv(self):
        """The next batch_size environments' (obs, rewards, terminated, truncated, info)."""
        self._check_open()
        return self._gather(self._next_batch())

    def _step_arrays(self, actions):
        """step() on the CPU backend, its results as a StepResult of numpy arrays, no tensors made: for
        cule.AtariEnv, whose outputs are numpy (a tenth of its step went to making and reading tensors)."""
        self.send(actions)
        return self._recv_arrays()

    def _recv_arrays(self):
        """recv() on the CPU backend as a StepResult of numpy arrays: for cule.envpool, whose outputs are numpy."""
        self._check_open()
        return self.backend.gather_arrays(self._next_batch(), self._same_step)

    def _next_batch(self) -> np.ndarray:
        """The ids of the next batch_size environments once they are stepped."""
        self._queue.wait_for_batch()
        return self._queue.take()

    def close(self, **kwargs):
        if self.backend is not None:
            self._queue.drain()
            self.backend.close()
        self.backend = None

    # ---- raw access (each environment's ALE state); these synchronise

    def get_ram(self) -> torch.Tensor:
        """RIOT RAM, uint8 [N, 128], as ALEInterface.getRAM()."""
        return self._drained().ram()

    def get_screen(self) -> torch.Tensor:
        """Palette indices, uint8 [N, H, 160], as ALEInterface.getScreen() (a mixed batch: H the tallest game's,
        shorter screens padded with 0)."""
        return self._drained().screens()

    def get_screen_rgb(self) -> torch.Tensor:
        """RGB, uint8 [N, H, 160, 3], as ALEInterface.getScreenRGB()."""
        return torch.from_numpy(rgb_of(self.blocks, self.backend, self.get_screen().cpu().numpy())).to(self.device)

    def lives(self) -> torch.Tensor:
        """Lives, int32 [N], as ALEInterface.lives()."""
        return self._drained().last_output("lives")

    def get_action_set(self) -> np.ndarray:
        """ALE action ids of the action indices."""
        return self.action_set.copy()

    # ---- environment states: clone, restore, fork

    def clone_state(self, ids=None, *, include_rng: bool = True) -> torch.Tensor:
        """The states of environments `ids` (default: all), uint8 [len(ids), state bytes] on ``device``.

        A row holds everything that decides an environment's future: console and cartridge, ALE's state and
        frame counters, the sticky-action RNG (left out with ``include_rng=False``, as ALE's cloneState), the
        reset no-op RNG, the frame buffers, the observation stack and the last step's results, behind a header
        naming the game, options and format (cule.state). restore_state() takes the rows back, here or in
        another env built with the same arguments; torch.save keeps them. On a GPU the states never leave it.
        ``ids``: an int, a sequence, or an array of ints. In a mixed batch each game's rows are padded to the
        widest game's.
        """
        checks.check_flags(include_rng=include_rng)
        return self._states.clone(self._state_ids(ids, "ids"), bool(include_rng))

    def restore_state(self, states, ids=None) -> None:
        """Puts states from clone_state() back: row i into environment ids[i] (default: all, one row each).

        The next step continues as the cloned environment would have, bit for bit. Rows without the
        sticky-action RNG leave the environment's own. Rows of another game, other options or another format
        version, damaged rows and rows holding values the emulator never makes raise StateError (naming the
        row, part and field), and nothing changes.
        """
        self._states.restore(states, self._state_ids(ids, "ids"))

    def copy_state(self, src_ids, dst_ids, *, include_rng: bool = True) -> None:
        """Forks: environment src_ids[i]'s state onto dst_ids[i], without the states leaving the device.

        An environment cannot be both a source and a destination in one call, nor a destination twice (one
        source may feed many); in a mixed batch both play the same game. With ``include_rng=False`` each
        destination keeps its sticky-action RNG, so the forks draw different sticky actions.
        """
        self._states.copy(self._state_ids(src_ids, "src_ids"), self._state_ids(dst_ids, "dst_ids"), bool(include_rng))

    # ---- internals

    def __getattr__(self, name):
        if name in _ONE_GAME and "blocks" in self.__dict__:
            raise AttributeError(f"a mixed batch has one {name} per game: env.blocks[k].{name}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _check_open(self):
        if self.backend is None:
            raise RuntimeError("this AtariVectorEnv is closed; create a new one")

    def _drained(self) -> backends.Backend:
        """The backend, once every background step has finished."""
        self._check_open()
        self._queue.drain()
        return self.backend

    def _state_ids(self, ids, name: str) -> np.ndarray:
        """Validated environment ids (int32) for the state methods; whole batches only, so none is stepping."""
        self._check_open()
        if self._queue.last_ids is None:
            raise RuntimeError("call reset() before cloning, restoring or copying states")
        if self.batch_size != self.num_envs:
            raise ValueError(f"states need batch_size == num_envs (got batch_size={self.batch_size}, "
                             f"num_envs={self.num_envs})")
        return checks.env_ids(ids, name, self.num_envs)

    def _gather(self, ids: np.ndarray):
        r = self.backend.gather(ids, self._same_step)
        info = {"env_id": r.env_id, **{name: getattr(r, name) for name in backends.INFO_OUTPUTS}}
        if r.final_obs is not None:
            info["final_obs"] = r.final_obs
        if self._game_of is not None:
            info["game"] = self._game_of[r.env_id.long()]
        if self._numpy:
            return r.obs.numpy(), r.rewards.numpy(), r.terminated.numpy(), r.truncated.numpy(), \
                {k: v.numpy() for k, v in info.items()}
        return r.obs, r.rewards, r.terminated, r.truncated, info

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
