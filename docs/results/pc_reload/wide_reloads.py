"""How often the F8 frame loop ran a load wider than the store before it, from a callgrind profile.

    valgrind --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no \
        --callgrind-out-file=OUT python docs/results/pc_reload/time_steps.py ms_pacman 10
    python docs/results/pc_reload/wide_reloads.py OUT path/to/cule/_core*.so

Unlike the test, which follows each label to its jump, this reads the whole loop in address order: a
load counts when a store within the 40 instructions before it wrote fewer of its bytes, so a load whose
store lies on another path counts too, and the figure is an upper bound.
"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests"))
from test_dispatch_build import _stack_access, _symbol_spans, disassemble, rsp_moved  # noqa: E402

LOOP = "_ZN4cule7console9run_frameINS_6CartF8EE"


def executions(profile: str) -> collections.Counter:
    """Executions of each instruction of the F8 loop (callgrind's Ir per address, calls' lines left out)."""
    counts, in_loop, after_call = collections.Counter(), False, False
    with open(profile) as f:
        for line in f:
            if line.startswith("fn="):
                in_loop = "run_frame<cule::CartF8>" in line
            elif line.startswith("calls="):
                after_call = True
            elif line.startswith("0x"):
                if not after_call and in_loop:
                    fields = line.split()
                    counts[int(fields[0], 16)] += int(fields[-1])
                after_call = False
    return counts


def main(profile: str, so: str) -> None:
    counts = executions(profile)
    (span,) = [s for name, s in _symbol_spans(so).items() if name.startswith(LOOP)]
    code = disassemble(so, *span)
    wide = 0
    for i, (_, op, operands) in enumerate(code):
        access = _stack_access(op, operands)
        if not access or access[0] != "store":
            continue
        _, offset, width = access
        pushed = 0
        for address, op2, operands2 in code[i + 1:i + 40]:
            pushed += rsp_moved(op2, operands2)
            other = _stack_access(op2, operands2)
            if other:
                kind, at, size = other[0], other[1] - pushed, other[2]
                if kind == "store" and at <= offset < at + size:
                    break
                if kind == "load" and (offset <= at < offset + width < at + size or at < offset < at + size):
                    wide += counts[address]
                    break
            if op2 in ("ret", "call"):
                break
    jumps = sum(counts[a] for a, op, operands in code if op == "jmp" and operands.startswith("*"))
    print(f"frame loop Ir {sum(counts.values()):,}; indirect jumps {jumps:,}; "
          f"wide reloads executed {wide:,} ({wide / jumps:.1%} of the jumps)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
