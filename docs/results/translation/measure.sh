#!/bin/bash
# measure.sh GAME: exactness (checked build vs base, screens), cachegrind per step (1 env, 150-50 steps)
g=$1; cd ${PROTO:-/tmp/proto}/$g
# exactness: the checked translated build (every translated jump checks its target) against the base build,
# on the traced run's envs and actions (16 envs, 1,500 steps) and on others (7 envs, 3,000 steps: other actions,
# past the trace's end); the screens' FNV-1a must be equal
echo "== $g exactness"
for run in "16 1500" "7 3000"; do ./drv_base $g.cfg $run; ./drv_trc $g.cfg $run; done
for b in drv_base drv_tr; do
  for s in 50 150; do
    valgrind --tool=cachegrind --branch-sim=yes --cache-sim=no --cachegrind-out-file=cg_${b}_$s.out ./$b $g.cfg 1 $s > /dev/null 2> cg_${b}_$s.log
  done
  python3 - "$b" <<'PY'
import re, sys
b = sys.argv[1]
def tot(s):
    t = open(f"cg_{b}_{s}.log").read()
    ir = int(re.search(r"I\s+refs:\s+([\d,]+)", t).group(1).replace(",", ""))
    m = re.search(r"Mispredicts:\s+([\d,]+)\s+\(\s*([\d,]+) cond \+\s*([\d,]+) ind\)", t)
    return ir, *[int(x.replace(",", "")) for x in m.groups()]
a, c = tot(50), tot(150)
d = [(y - x) / 100 for x, y in zip(a, c)]
print(f"{b}: per step {d[0]/1e6:.3f}M instructions, mispredicts {d[1]/1e3:.2f}k ({d[2]/1e3:.2f}k cond + {d[3]/1e3:.2f}k ind)")
PY
done
