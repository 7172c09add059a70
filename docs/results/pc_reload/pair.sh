#!/bin/bash
# Alternates this checkout's build and the one under $BASE_SITE, PAIRS times, and prints the
# median, lowest and highest ratio of their CPU time per environment-step.
#   BASE_SITE=/tmp/base_site bash pair.sh GAME STEPS PAIRS
here=$(dirname "$0")
for i in $(seq "$3"); do
  a=$(python "$here/time_steps.py" "$1" "$2" | awk '{print $2}')
  b=$(BASE=$BASE_SITE python "$here/time_steps.py" "$1" "$2" | awk '{print $2}')
  echo "$a $b"
done | python3 -c "
import statistics as st, sys
r = [tuple(map(float, l.split())) for l in sys.stdin]
q = sorted(a / b for a, b in r)
print('$1', 'new/base median %.3f min %.3f max %.3f' % (st.median(q), q[0], q[-1]),
      'new med %.1f base med %.1f' % (st.median(a for a, b in r), st.median(b for a, b in r)))
"
