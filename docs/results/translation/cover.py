"""cover.py: the share of instructions that ran at an address the trace did not see (counts.txt from driver.cpp
built with -DPROTO_TRACE and a per-address count, 7 envs x 3,000 steps; pcs_all.txt from build.sh)."""
import sys, cule
from pathlib import Path
for g in ["pong", "breakout", "space_invaders", "seaquest", "ms_pacman", "alien", "hero"]:
    d = next((Path(p) / g for p in ["/tmp/proto", "/tmp/proto2"] if (Path(p) / g / "pcs_all.txt").exists()), None)
    cnt = Path("/tmp/proto3") / g / "counts.txt"
    if d is None or not cnt.exists():
        print(g, "missing"); continue
    size = len(open(cule.load_rom(g).path, "rb").read())
    banked = size == 8192
    key = (lambda pc: pc) if banked else (lambda pc: pc & (size - 1))
    traced = {key(int(x)) for x in open(d / "pcs_all.txt") if banked or int(x) & 0x1000}
    total = missed = 0
    miss_sites = set()
    for line in open(cnt):
        pc, n = map(int, line.split())
        if not banked and not pc & 0x1000:
            total += n; missed += n; continue  # RAM: always the generic path
        total += n
        if key(pc) not in traced:
            missed += n; miss_sites.add(key(pc))
    print(f"{g}: {missed / total:.4%} of {total:,} instructions outside the traced addresses ({len(miss_sites)} ROM addresses untraced)")
