"""AtariVectorEnv: ale-py's vector env interface over cule's emulator, returning torch tensors.

It takes the arguments of ``ale_py.vector.AtariVectorEnv`` (same names, same
defaults) plus ``device``, ``reset_mode``, ``mode`` and ``difficulty``. With
``frameskip=1, repeat_action_probability=0`` and no preprocessing, each
environment behaves as an ``ale_py.ALEInterface`` with ``frame_skip=1``:
after ``reset()`` and after every ``step()`` it has the same RAM and the same
screen, frame for frame.

Preprocessing status: frame skipping (rewards summed, the last frame
observed), max-pooling of the last two frames, grayscale/RGB, frame stacking,
reward clipping and NEXT_STEP autoreset are implemented. Resizing, no-op
starts, FIRE on reset and episodic life are matched against ale-py's own
vector env in issue 5; until then asking for them raises NotImplementedError.
"""
from __future__ import annotations

import numpy as np
import torch

from .backends.cpu import make_emulator
from .games import FULL_ACTION_SET, game_info
from .palettes import palette_for
from .roms import load_rom

_RESET_MODES = ("ale",)


class AtariVectorEnv:
    """A batch of ALE games stepped together; observations and rewards are torch tensors.

    Args (ale-py's names and defaults, see ``ale_py.vector.AtariVectorEnv``):
        game: ALE game id ("pong"), gymnasium name ("ALE/Pong-v5") or ROM path.
        num_envs: number of environments.
        num_threads: CPU threads stepping the environments (0: all cores).
        max_num_frames_per_episode: truncation limit in emulated frames (0: none).
        repeat_action_probability: sticky actions, drawn from each environment's
            own ALE random stream.
        full_action_space: use all 18 actions instead of the game's minimal set.
        img_height, img_width: observation size (the native screen is 210x160,
            250x160 for PAL games).
        grayscale: ALE's grayscale table instead of RGB.
        stack_num: frames stacked in each observation.
        frameskip: emulated frames per step; rewards are summed.
        maxpool: observe the pixel-wise max of the last two frames of a step.
        noop_max, use_fire_reset, episodic_life, life_loss_info: see issue 5.
        reward_clipping: clip each step's reward to -1, 0, 1.
        autoreset_mode: "NextStep": a finished environment is reset by the
            following step(), which ignores its action.
    cule's own:
        device: torch device of the returned tensors ("cpu"; "cuda" with issue 6).
        reset_mode: "ale" runs ALE's whole reset_game sequence in the emulator.
        mode, difficulty: game mode and difficulty (default: the game's defaults).
    """

    def __init__(
        self,
        game: str,
        num_envs: int,
        *,
        batch_size: int = 0,
        num_threads: int = 0,
        thread_affinity_offset: int = -1,
        max_num_frames_per_episode: int = 108000,
        repeat_action_probability: float = 0.0,
        full_action_space: bool = False,
        continuous: bool = False,
        continuous_action_threshold: float = 0.5,
        autoreset_mode: str = "NextStep",
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
        mode: int | None = None,
        difficulty: int | None = None,
        _gymnasium: bool = False,
    ):
        if not isinstance(num_envs, int) or num_envs <= 0:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if not isinstance(frameskip, int) or frameskip <= 0:
            raise ValueError(f"frameskip must be a positive int, got {frameskip!r}")
        if not isinstance(stack_num, int) or stack_num <= 0:
            raise ValueError(f"stack_num must be a positive int, got {stack_num!r}")
        if not 0.0 <= repeat_action_probability <= 1.0:
            raise ValueError(f"repeat_action_probability must be in [0, 1], got {repeat_action_probability!r}")
        if reset_mode not in _RESET_MODES:
            raise ValueError(f"reset_mode must be one of {_RESET_MODES}, got {reset_mode!r}")
        if str(autoreset_mode).lower().replace("_", "") not in ("nextstep", "autoresetmode.nextstep"):
            raise NotImplementedError(f"autoreset_mode {autoreset_mode!r}: only NextStep is implemented (issue 5)")
        if batch_size not in (0, num_envs):
            raise NotImplementedError("asynchronous batches (batch_size < num_envs) are not implemented")
        if continuous:
            raise NotImplementedError("continuous actions are not implemented (issue 5)")
        unsupported = [name for name, on in (("noop_max", noop_max), ("use_fire_reset", use_fire_reset),
                                             ("episodic_life", episodic_life), ("life_loss_info", life_loss_info))
                       if on]
        if unsupported:
            raise NotImplementedError(
                f"{', '.join(unsupported)} arrive with issue 5 (exact parity with ale-py's vector env); "
                f"pass {', '.join(f'{u}=0' if u == 'noop_max' else f'{u}=False' for u in unsupported)} for now")
        self.device = torch.device(device)
        if self.device.type != "cpu":
            raise NotImplementedError(f"device {str(self.device)!r}: the CUDA backend arrives with issue 6; use 'cpu'")

        self.rom = load_rom(game)
        if self.rom.game is None:
            raise ValueError(f"{game!r} is not one of ALE's games: cule needs its rewards and terminals")
        self.game = self.rom.game
        info = game_info(self.game)
        self.mode = info["default_mode"] if mode is None else mode
        self.difficulty = 0 if difficulty is None else difficulty
        if self.mode not in info["modes"]:
            raise ValueError(f"{self.game} has modes {info['modes']}, not {self.mode}")
        # ALE only checks a difficulty that is asked for (backgammon lists only 3, yet starts at 0).
        if difficulty is not None and difficulty not in info["difficulties"]:
            raise ValueError(f"{self.game} has difficulties {info['difficulties']}, not {self.difficulty}")
        self.action_set = np.array(FULL_ACTION_SET if full_action_space else info["minimal_actions"], dtype=np.int32)

        self.num_envs = num_envs
        self.num_threads = num_threads
        self.frameskip = frameskip
        self.maxpool = maxpool
        self.stack_num = stack_num
        self.grayscale = grayscale
        self.reward_clipping = reward_clipping
        self._gymnasium = _gymnasium
        limit = max_num_frames_per_episode if max_num_frames_per_episode and max_num_frames_per_episode > 0 else 0
        # ale-py's vector env counts the episode's frames itself with ALE's own
        # limit off; gymnasium's AtariEnv uses ALE's limit.
        self.max_episode_steps = 2**31 - 1 if (_gymnasium or not limit) else limit
        self.emulator = make_emulator(self.rom, num_envs, repeat_action_probability=repeat_action_probability,
                                      max_num_frames_per_episode=limit if _gymnasium else 0)
        self.screen_height = self.emulator.screen_height
        img_height = self.screen_height if img_height is None else img_height
        img_width = 160 if img_width is None else img_width
        if (img_height, img_width) != (self.screen_height, 160):
            raise NotImplementedError(
                f"resizing to {img_height}x{img_width} arrives with issue 5; this game's screen is "
                f"{self.screen_height}x160: pass img_height={self.screen_height}, img_width=160")
        rgb, gray = palette_for(self.emulator.is_pal)
        self.emulator.configure_observation(rgb, gray, grayscale, stack_num, maxpool)
        self._obs_shape = (num_envs, stack_num, self.screen_height, 160) + (() if grayscale else (3,))
        self._needs_reset = np.ones(num_envs, dtype=bool)
        self._seeded = False

    # ---- gymnasium-style interface

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        """Resets every environment; returns (observations, info).

        With a seed, environment i is powered on as gymnasium's ALE/<Game>-v5
        with reset(seed=seed + i) would (a fresh console and ALE random stream);
        without one, each environment runs ALE's reset_game.
        """
        if seed is not None or not self._seeded:
            # gymnasium's AtariEnv.reset(seed): loadROM (power-on and its own
            # reset_game), then reset_game once more (below).
            # loadROM's own reset_game runs in the default mode and difficulty;
            # the requested ones apply from the next reset (ALE's setMode).
            default_mode = game_info(self.game)["default_mode"]
            for i, s in enumerate(self._seeds(seed)):
                self.emulator.load(i, s, default_mode, 0)
                self.emulator.set_mode(i, self.mode, self.difficulty)
            self._seeded = True
        self.emulator.vector_reset_batch(np.ones(self.num_envs, dtype=np.uint8), self.num_threads)
        self._needs_reset[:] = False
        return self._observe(), self._info(self.emulator.observe()[1])

    def step(self, actions):
        """Steps every environment; returns (obs, rewards, terminated, truncated, info) as tensors.

        An environment whose episode ended in the previous step is reset
        instead (NextStep autoreset): its observation is the new episode's
        first, with reward 0 and both flags false.
        """
        if isinstance(actions, torch.Tensor) and actions.device != self.device:
            raise ValueError(f"actions are on {actions.device}, the environment on {self.device}: "
                             f"move them with .to({str(self.device)!r})")
        actions = torch.as_tensor(actions)
        if actions.dtype.is_floating_point or actions.dtype.is_complex or actions.dtype == torch.bool:
            raise TypeError(f"actions must be integer indices into the action set, got dtype {actions.dtype}")
        actions = actions.cpu().numpy().astype(np.int64)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"expected {self.num_envs} actions, one per environment, got shape {tuple(actions.shape)}")
        if (actions < 0).any() or (actions >= len(self.action_set)).any():
            bad = actions[(actions < 0) | (actions >= len(self.action_set))][0]
            raise ValueError(f"action {bad} is outside the action set of {len(self.action_set)} actions")
        resetting = self._needs_reset.copy()
        if resetting.any():
            self.emulator.vector_reset_batch(resetting.astype(np.uint8), self.num_threads)
        rewards, game_over, truncated, life_lost, lives = self.emulator.step_batch(
            self.action_set[actions], (~resetting).astype(np.uint8), self.frameskip, self.max_episode_steps,
            False, self._gymnasium, self.num_threads)
        terminated = game_over & ~resetting
        # ale-py's vector env never reports both; gymnasium's AtariEnv reports ALE's two flags as they are.
        truncated = truncated & ~resetting if self._gymnasium else truncated & ~terminated & ~resetting
        rewards = rewards.astype(np.int64)
        if self.reward_clipping:
            rewards = np.clip(rewards, -1, 1)
        self._needs_reset = terminated | truncated
        obs = self._observe()
        info = self._info(lives)
        return (obs, torch.from_numpy(rewards).to(self.device), torch.from_numpy(terminated).to(self.device),
                torch.from_numpy(truncated).to(self.device), info)

    # ---- raw access

    def get_ram(self) -> torch.Tensor:
        """RIOT RAM, uint8 [N, 128], as ALEInterface.getRAM()."""
        return torch.from_numpy(np.stack([self.emulator.ram(i) for i in range(self.num_envs)])).to(self.device)

    def get_screen(self) -> torch.Tensor:
        """Palette indices, uint8 [N, H, 160], as ALEInterface.getScreen()."""
        screens, _ = self.emulator.observe()
        return torch.from_numpy(screens).to(self.device)

    def get_screen_rgb(self) -> torch.Tensor:
        """RGB, uint8 [N, H, 160, 3], as ALEInterface.getScreenRGB()."""
        rgb, _ = palette_for(self.emulator.is_pal)
        return torch.from_numpy(rgb[self.emulator.observe()[0]]).to(self.device)

    def lives(self) -> torch.Tensor:
        return torch.from_numpy(self.emulator.observe()[1]).to(self.device)

    def close(self):
        self.emulator = None

    # ---- internals

    def _seeds(self, seed) -> list[int]:
        if seed is None:
            base = [int(np.random.SeedSequence().generate_state(1)[0])] * self.num_envs
            return [(b + i) & 0xFFFFFFFF for i, b in enumerate(base)]
        seeds = list(seed) if isinstance(seed, (list, tuple, np.ndarray)) else [int(seed) + i for i in range(self.num_envs)]
        if len(seeds) != self.num_envs:
            raise ValueError(f"expected {self.num_envs} seeds, got {len(seeds)}")
        # gymnasium's AtariEnv: SeedSequence(seed) -> (numpy seed, ALE seed).
        return [int(np.random.SeedSequence(int(s)).generate_state(2)[1]) for s in seeds]

    def _observe(self) -> torch.Tensor:
        obs = np.empty(self._obs_shape, dtype=np.uint8)
        self.emulator.observations(obs)
        if self._gymnasium:
            obs = obs[:, 0]  # gymnasium's AtariEnv: one frame, no stack axis
        return torch.from_numpy(obs).to(self.device)

    def _info(self, lives: np.ndarray) -> dict:
        frame, episode = self.emulator.counters_batch()
        return {"lives": torch.from_numpy(lives).to(self.device),
                "frame_number": torch.from_numpy(frame).to(self.device),
                "episode_frame_number": torch.from_numpy(episode).to(self.device)}
