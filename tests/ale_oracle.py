"""The ALE side of frame-by-frame differential tests (a helper module, not tests).

``record`` runs ale-py 0.12.1 on a game with a seeded random action sequence and
keeps everything observable at every step; ``first_mismatch`` finds where another
recording (ours) first departs from it; ``format_table`` prints a summary.

A recording is a dict of numpy arrays indexed by step ``t`` (see ``record``).
"""
from __future__ import annotations

import numpy as np

import ale_py

# ALE's full action set: the 18 player-A action ids NOOP (0) ... DOWNLEFTFIRE (17).
N_ACTIONS = 18

# Keys first_mismatch compares, in the order it reports them within one step.
COMPARED_KEYS = ("ram", "screen", "reward", "game_over", "lives", "frame_number", "episode_frame_number")


def ale_interface(game: str, *, seed: int = 0, frameskip: int = 1, repeat_action_probability: float = 0.0,
                  mode: int | None = None, difficulty: int | None = None,
                  rom: str | None = None) -> ale_py.ALEInterface:
    """An ALEInterface with ale-py's bundled ROM for ``game`` (an ALE id, e.g. "pong") loaded.

    ``seed`` is ALE's ``random_seed``; ``frameskip`` its ``frame_skip``; logging is
    quiet (errors only). ALE applies a mode or difficulty only at the next
    ``reset_game()``, so when either is given this calls ``reset_game()`` after
    setting them (as gymnasium's AtariEnv does); otherwise the state is the one
    ``loadROM`` leaves, which already includes ALE's initial reset. ``rom`` loads
    that image instead (ALE takes the game's settings from its file name).
    """
    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
    ale = ale_py.ALEInterface()
    ale.setInt("random_seed", seed)
    ale.setInt("frame_skip", frameskip)
    ale.setFloat("repeat_action_probability", repeat_action_probability)
    ale.loadROM(rom or ale_py.roms.get_rom_path(game))
    if mode is not None:
        ale.setMode(mode)
    if difficulty is not None:
        ale.setDifficulty(difficulty)
    if mode is not None or difficulty is not None:
        ale.reset_game()
    return ale


def _check_recording(frames: int, reset_every: int | None) -> None:
    if frames < 0:
        raise ValueError(f"frames must be >= 0, got {frames}")
    if reset_every is not None:
        if reset_every < 1:
            raise ValueError(f"reset_every must be >= 1, got {reset_every}")
        if frames < 2 * reset_every:
            raise ValueError(f"reset_every={reset_every} needs frames >= {2 * reset_every} "
                             f"to give at least 2 resets; got frames={frames}")


def record(game: str, frames: int, *, action_seed: int = 0, reset_every: int | None = None, seed: int = 0,
           mode: int | None = None, difficulty: int | None = None) -> dict:
    """Runs ALE for ``frames`` single-frame steps and records every step.

    Setup: ``ale_interface(game, seed=seed, mode=mode, difficulty=difficulty)``
    with frame_skip 1 and no sticky actions. Actions are
    ``numpy.random.default_rng(action_seed).integers(0, 18, size=frames)``,
    ALE action ids (``ale_py.Action``, NOOP = 0 ... DOWNLEFTFIRE = 17). That is
    the full action set, which ``getLegalActionSet()`` returns in this order for
    every game except skiing and lost_luggage: they forbid the 9 FIRE actions,
    list only the other 9 as legal, and ALE's act() turns a forbidden action
    into NOOP. Paddle games get ALE's default paddle strength 1.0.

    What index ``t`` holds, for ``t`` in ``0 .. frames``:

    * ``t = 0``: the state right after ``loadROM`` (which ends with ALE's reset),
      or after the extra ``reset_game()`` when a mode or difficulty is set.
      ``reward[0] = 0``, ``game_over[0] = False``.
    * ``t >= 1``: ``act(actions[t - 1])`` was called. ``reward[t]`` is what that
      ``act`` returned and ``game_over[t]`` is ``game_over()`` right after it.
      Then, if ``game_over[t]`` or (``reset_every`` and ``t % reset_every == 0``),
      ``reset_game()`` is called and ``t`` is listed in ``resets``. The state
      fields (``ram``, ``screen``, ``lives``, ``frame_number``,
      ``episode_frame_number``) are read last, so at a reset step they are the
      state *after* the reset, i.e. what the next ``act`` starts from.

    Returns a dict:
      ram [T+1, 128] uint8, screen [T+1, H, W] uint8 (palette indices, getScreen),
      reward [T+1] int32, game_over [T+1] bool, lives [T+1] int32,
      frame_number [T+1] int64, episode_frame_number [T+1] int64,
      actions [T] int64, resets: list[int] (steps where reset_game() was called),
      and game, seed, action_seed, reset_every, mode, difficulty as given.

    With ``reset_every``, ``frames`` must be at least ``2 * reset_every`` so the
    recording contains at least two resets.
    """
    _check_recording(frames, reset_every)
    ale = ale_interface(game, seed=seed, mode=mode, difficulty=difficulty)
    action_set = [ale_py.Action(i) for i in range(N_ACTIONS)]
    actions = np.random.default_rng(action_seed).integers(0, N_ACTIONS, size=frames).astype(np.int64)

    height, width = ale.getScreenDims()
    ram = np.empty((frames + 1, 128), dtype=np.uint8)
    screen = np.empty((frames + 1, height, width), dtype=np.uint8)
    reward = np.zeros(frames + 1, dtype=np.int32)
    game_over = np.zeros(frames + 1, dtype=bool)
    lives = np.empty(frames + 1, dtype=np.int32)
    frame_number = np.empty(frames + 1, dtype=np.int64)
    episode_frame_number = np.empty(frames + 1, dtype=np.int64)
    resets: list[int] = []

    def read_state(t: int) -> None:
        ale.getRAM(ram[t])
        ale.getScreen(screen[t])
        lives[t] = ale.lives()
        frame_number[t] = ale.getFrameNumber()
        episode_frame_number[t] = ale.getEpisodeFrameNumber()

    read_state(0)
    for t in range(1, frames + 1):
        reward[t] = ale.act(action_set[actions[t - 1]])
        game_over[t] = ale.game_over()
        if game_over[t] or (reset_every is not None and t % reset_every == 0):
            ale.reset_game()
            resets.append(t)
        read_state(t)

    return {
        "ram": ram, "screen": screen, "reward": reward, "game_over": game_over, "lives": lives,
        "frame_number": frame_number, "episode_frame_number": episode_frame_number,
        "actions": actions, "resets": resets,
        "game": game, "seed": seed, "action_seed": action_seed, "reset_every": reset_every,
        "mode": mode, "difficulty": difficulty,
    }


def _describe(key: str, ours: np.ndarray, theirs: np.ndarray) -> str:
    """One step's difference for ``key``; ``ours`` and ``theirs`` have the same shape."""
    if key == "ram":
        diff = np.flatnonzero(ours != theirs)
        i = diff[0]
        return (f"ram: {diff.size} byte(s) differ, first ${0x80 + i:02X}: "
                f"ours ${ours[i]:02X} theirs ${theirs[i]:02X}")
    if key == "screen":
        rows, cols = np.nonzero(ours != theirs)
        r, c = rows[0], cols[0]
        return (f"screen: {rows.size} pixel(s) differ in {np.unique(rows).size} row(s), first row {r} col {c}: "
                f"ours ${ours[r, c]:02X} theirs ${theirs[r, c]:02X}")
    return f"{key}: ours {ours.item()} theirs {theirs.item()}"


def first_mismatch(ours: dict, theirs: dict) -> tuple[int, str] | None:
    """(first step where the recordings differ, what differed), or None if they agree.

    Compares the keys of ``COMPARED_KEYS`` present in both dicts (arrays or
    anything ``numpy.asarray`` accepts, indexed by step), over the steps both
    have. The description names every key differing at that step, e.g.
    ``"ram: 2 byte(s) differ, first $8D: ours $05 theirs $06"`` or
    ``"screen: 40 pixel(s) differ in 2 row(s), first row 34 col 12: ours $0E theirs $00"``.
    A screen size mismatch is reported at step 0; a length mismatch at the
    first step only one recording has.
    """
    keys = [k for k in COMPARED_KEYS if k in ours and k in theirs]
    arrays = {k: (np.asarray(ours[k]), np.asarray(theirs[k])) for k in keys}

    if "screen" in arrays:
        a, b = arrays["screen"]
        if a.shape[1:] != b.shape[1:]:
            return 0, f"screen size: ours {a.shape[1:]} theirs {b.shape[1:]}"

    first: dict[str, int] = {}
    length = min((min(len(a), len(b)) for a, b in arrays.values()), default=0)
    for k, (a, b) in arrays.items():
        differs = (a[:length] != b[:length]).reshape(length, -1).any(axis=1) if length else np.zeros(0, bool)
        if differs.any():
            first[k] = int(np.argmax(differs))
    if first:
        t = min(first.values())
        return t, "; ".join(_describe(k, arrays[k][0][t], arrays[k][1][t]) for k in keys if first.get(k) == t)

    for k, (a, b) in arrays.items():
        if len(a) != len(b):
            return length, f"length: {k} has {len(a)} steps in ours, {len(b)} in theirs"
    return None


def format_table(rows: list[tuple[str, int, int | None, str]]) -> str:
    """A text table of (game, frames compared, first mismatching step or None, what differed)."""
    header = ("game", "frames", "first mismatch", "what differed")
    cells = [header] + [(game, str(frames), "exact" if first is None else str(first), what)
                        for game, frames, first, what in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(3)]

    def line(row):
        return f"{row[0]:<{widths[0]}}  {row[1]:>{widths[1]}}  {row[2]:>{widths[2]}}  {row[3]}".rstrip()

    rule = "  ".join("-" * w for w in widths) + "  " + "-" * len(header[3])
    n_exact = sum(1 for r in rows if r[2] is None)
    return "\n".join([line(header), rule] + [line(r) for r in cells[1:]] + [f"{n_exact}/{len(rows)} exact"])
