"""How often the F8 frame loop ran a load wider than the store before it, from a callgrind profile.

    valgrind --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no \
        --callgrind-out-file=OUT python docs/results/pc_reload/time_steps.py ms_pacman 10
    python docs/results/pc_reload/wide_reloads.py OUT path/to/cule/_core*.so

A load counts when it reads a stack slot wider than a store to it within the 40 instructions
before (the test's reading of an instruction, tests/test_dispatch_build.py).
"""
import collections
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests"))
from test_dispatch_build import _stack_access  # noqa: E402

out, SO = sys.argv[1], sys.argv[2]
cost=collections.Counter(); fn=None; skip=False; frame_ir=0
for line in open(out):
    if line.startswith('fn='):
        fn=line[3:].strip(); continue
    if line.startswith('calls='): skip=True; continue
    if line.startswith('0x'):
        if skip: skip=False; continue
        if fn and 'run_frame<cule::CartF8>' in fn:
            p=line.split(); cost[int(p[0],16)]+=int(p[-1])
sym=[l.split() for l in subprocess.run(["nm",SO],capture_output=True,text=True).stdout.splitlines() if l.split()[-1].startswith('_ZN4cule7console9run_frameINS_6CartF8EE')][0]
text=subprocess.run(["objdump","-d","--no-show-raw-insn",f"--disassemble={sym[-1]}",SO],capture_output=True,text=True,check=True).stdout
ins=[]
for l in text.splitlines():
    m=re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*([^#<]*)",l)
    if m: ins.append((int(m.group(1),16),m.group(2),m.group(3).strip()))
wide=0
for i,(ad,op,ops) in enumerate(ins):
    a=_stack_access(op,ops)
    if not a or a[0]!="store": continue
    _,off,w=a; pushed=0
    for ad2,op2,ops2 in ins[i+1:i+40]:
        if op2=="push": pushed+=8
        elif op2=="pop": pushed-=8
        elif op2 in("sub","add") and ops2.endswith(",%rsp") and ops2.startswith("$"):
            pushed+=(1 if op2=="sub" else -1)*int(ops2.split(",")[0].lstrip("$"),0)
        b=_stack_access(op2,ops2)
        if b:
            o2=b[1]-pushed
            if b[0]=="store" and o2<=off<o2+b[2]: break
            if b[0]=="load" and (off<=o2<off+w<o2+b[2] or o2<off<o2+b[2]):
                wide+=cost.get(ad2,0); break
        if op2 in("ret","call"): break
jumps=sum(cost.get(ad,0) for ad,op,ops in ins if op=='jmp' and ops.startswith('*'))
print(f"frame loop Ir {sum(cost.values()):,}; indirect jumps {jumps:,}; wide reloads executed {wide:,} ({wide/jumps:.1%} of the jumps)")
