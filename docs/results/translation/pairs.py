import os, subprocess, sys, statistics, re
g, n, steps = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def run(b):
    out = subprocess.run([f"./{b}", f"{g}.cfg", "16", steps], cwd=os.environ.get("PROTO", "/tmp/proto") + f"/{g}", capture_output=True, text=True).stdout
    return float(re.search(r"cpu_us_per_env_step ([\d.]+)", out).group(1))
ratios, base, tr = [], [], []
for i in range(n):
    order = ["drv_base", "drv_tr"] if i % 2 == 0 else ["drv_tr", "drv_base"]
    r = {b: run(b) for b in order}
    base.append(r["drv_base"]); tr.append(r["drv_tr"]); ratios.append(r["drv_tr"] / r["drv_base"])
print(f"{g}: base {statistics.median(base):.1f} us, translated {statistics.median(tr):.1f} us per env-step; "
      f"translated/base paired median {statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f}, {n} pairs)")
