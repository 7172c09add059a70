"""Warp divergence without a GPU: the fraction of a warp's 32 threads that share each emulated instruction's path.

A SIMT model of cule_run (simt_driver.cpp, compiled here with g++ for each
game): a warp's 32 environments take ale-py's default vector-env steps with
random actions, and their instruction streams (each instruction's opcode and
the bus targets of its accesses) are replayed in lockstep. Lanes whose
paths differ at a position run one after another, so the mean number of
threads per issued warp instruction, over 32, is what a GPU warp would keep
busy. Three regrouping rules are reported:

  step   lanes start each step together and never regroup;
  frame  they regroup at every frame's start (the kernel's frame loop);
  wsync  they also regroup at every WSYNC write (where the 6507 waits for
         the end of the scanline anyway).

Steps in which an environment resets are left out for that environment:
on the device its reset runs in cule_reset, apart from the stepping warps.

The same run replays the host's threaded dispatch (console::run_frame, whose
every label ends in its own indirect jump) under cachegrind's model of such
a jump, which predicts the target it took last (valgrind's
cachegrind/cg_branchpred.c, aliasing left out), and reports the fraction of
dispatch jumps mispredicted with one label per code-map entry (the loop
today), with R copies of every label chosen per ROM byte by the code map
(copies_R: by the byte's rank among equal bytes, R = 4, 8, 16; next_R: by
the label of the instruction after it, R = 2, 4, 8), and with a label per
ROM address. Here every instruction of
the measured steps counts, the environments run one after another as on one
host thread.

    python -m cule.benchmarks.simt                        # pong breakout ms_pacman space_invaders
    python -m cule.benchmarks.simt --games seaquest --steps 100
"""
from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import cule
from cule.benchmarks import add_output_dir
from cule.games import game_info
from cule.kernels import CORE_HEADERS, game_type
from cule.palettes import palette_for

GAMES = ["pong", "breakout", "ms_pacman", "space_invaders"]
DRIVER = Path(__file__).resolve().parent / "simt_driver.cpp"
DRIVER_CONFIG = DRIVER.with_name("driver_config.hpp")  # its settings, read as measure() writes them
CXX = os.environ.get("CXX", "g++")


# The vector env's default (ale-py's): no sticky actions.
STICKY = inspect.signature(cule.AtariVectorEnv).parameters["repeat_action_probability"].default

# The per-game drivers, kept between runs (their names carry a digest of the sources).
BUILD_CACHE = Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")).expanduser() / "cule" / "simt"


def build(game: str, cart: str, cache: Path, options: tuple = ("-O2",)) -> Path:
    """The driver for one game, compiled once per source version and options (kept in `cache`)."""
    flags = ["-std=c++17", *options, f"-I{CORE_HEADERS}", f"-DCULE_SIMT_CART_TYPE=cule::CartType::k{cart}",
             f"-DCULE_SIMT_GAME={game_type(game)}"]
    digest = hashlib.sha256(" ".join([CXX] + flags).encode())
    for path in sorted([DRIVER, DRIVER_CONFIG, *CORE_HEADERS.rglob("*.hpp"), *CORE_HEADERS.rglob("*.inc")]):
        digest.update(path.read_bytes())
    binary = cache / f"simt-{game}-{digest.hexdigest()[:16]}"
    if not binary.exists():
        cache.mkdir(parents=True, exist_ok=True)
        print(f"compiling the driver for {game} ({' '.join(options)}; several minutes on 2 cores, kept in {cache})",
              flush=True)
        done = subprocess.run([CXX, *flags, str(DRIVER), "-o", str(binary)], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"compiling the SIMT driver for {game} failed:\n{done.stderr[-3000:]}")
    return binary


def driver_config(game: str, envs: int, steps: int, seed: int) -> dict:
    """A one-game driver's settings (driver_config.hpp reads them): the ROM, its properties, the palettes,
    the minimal action set and the sticky-action probability."""
    rom = cule.load_rom(game)
    probe = cule.AtariVectorEnv(game, 1)
    rgb, gray = palette_for(probe.emulator.is_pal)
    probe.close()
    info = game_info(game)
    props = rom.properties
    return {
        "rom": rom.path, "envs": envs, "steps": steps, "seed": seed, "mode": info["default_mode"],
        "ystart": props["ystart"], "height": props["height"], "hmove_blanks": int(props["hmove_blanks"]),
        "format": props["format"], "initial_switches": props["initial_switches"],
        "left_paddles": int(props["left_paddles"]), "right_paddles": int(props["right_paddles"]),
        "swap_ports": int(props["swap_ports"]), "swap_paddles": int(props["swap_paddles"]),
        "palette_gray": " ".join(map(str, np.asarray(gray).ravel().tolist())),
        "palette_rgb": " ".join(map(str, np.asarray(rgb).ravel().tolist())),
        "actions": " ".join(map(str, info["minimal_actions"])),
        "repeat_action_probability": STICKY,
    }


def measure(game: str, envs: int, steps: int, seed: int, cache: Path, options: tuple = ("-O2",)) -> dict:
    rom = cule.load_rom(game)
    lines = driver_config(game, envs, steps, seed)
    cache.mkdir(parents=True, exist_ok=True)
    config = cache / f"simt-{game}.cfg"
    config.write_text("".join(f"{k} {v}\n" for k, v in lines.items()))
    binary = build(game, rom.bankswitch, cache, options)
    done = subprocess.run([str(binary), str(config)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"the SIMT driver failed for {game}:\n{done.stderr[-3000:]}")
    return {"game": game, **json.loads(done.stdout)}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m cule.benchmarks.simt", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=GAMES, help="ALE game ids")
    parser.add_argument("--envs", type=int, default=32, help="environments in the warp")
    parser.add_argument("--steps", type=int, default=200, help="vector steps (frameskip 4) per game")
    parser.add_argument("--seed", type=int, default=0, help="seeds env i with seed + i; the actions too")
    add_output_dir(parser, "simt")
    args = parser.parse_args()
    if shutil.which(CXX) is None:
        parser.error(f"needs a C++ compiler ({CXX}; set CXX)")
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for game in args.games:
        t0 = time.perf_counter()
        rows.append(measure(game, args.envs, args.steps, args.seed, BUILD_CACHE))
        r = rows[-1]
        print(f"{game:16s} active lanes: step {r['step']:.3f}  frame {r['frame']:.3f}  wsync {r['wsync']:.3f}  "
              f"({r['instructions']:,} instructions, {time.perf_counter() - t0:.0f} s); dispatch mispredicted: "
              + "  ".join(f"{k} {v:.1%}" for k, v in r["mispredicted"].items()), flush=True)
    table = ["| game | step | frame | wsync |", "|---|---|---|---|"]
    table += [f"| {r['game']} | {r['step']:.3f} | {r['frame']:.3f} | {r['wsync']:.3f} |" for r in rows]
    layouts = list(rows[0]["mispredicted"]) if rows else []
    table += ["", "Dispatch jumps mispredicted under cachegrind's model, by label layout:", "",
              "| game | jumps | " + " | ".join(layouts) + " |", "|---|---|" + "---|" * len(layouts)]
    table += [f"| {r['game']} | {r['dispatch_jumps']:,} | "
              + " | ".join(f"{r['mispredicted'][k]:.1%}" for k in layouts) + " |" for r in rows]
    meta = dict(date=time.strftime("%Y-%m-%d"), command=" ".join(["python -m cule.benchmarks.simt"] + sys.argv[1:]))
    (out / "simt.json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))
    (out / "simt.md").write_text(f"{meta['date']}, `{meta['command']}`\n\n" + "\n".join(table) + "\n")
    print("\n" + "\n".join(table) + f"\n\nwrote {out / 'simt.json'} and {out / 'simt.md'}")


if __name__ == "__main__":
    main()
