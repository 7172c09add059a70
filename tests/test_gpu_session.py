"""The GPU session's dry run: every part's command runs on the CPU (the launch shim), so no GPU minute is lost
to a typo, a missing file or a broken part; the output folder holds at most eight files."""
import json
import sys

from conftest import BackgroundJob

# about a minute; started with the test run
DRY_RUN = BackgroundJob("gpu-session-dry-run", lambda folder: [
    sys.executable, "-m", "cule.benchmarks.gpu_session", "--dry-run", "--output-dir", str(folder / "out"),
    "--games", "pong", "ms_pacman", "--envs", "16", "64", "--parts", "throughput", "jax", "specialised", "tests",
    "train", "ncu", "memcheck", "--trainers", "a2c_vtrace", "ppo", "rainbow", "ppo_jax"])


@DRY_RUN.mark
def test_gpu_session_dry_run_runs_every_part():
    done = DRY_RUN.result()
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    out = done.folder / "out"
    session = json.loads((out / "session.json").read_text())
    from cule.benchmarks.gpu_session import PARTS
    assert [p["part"] for p in session["parts"]] == [p.name for p in PARTS]
    assert all(p["rc"] == 0 and not p["timed_out"] for p in session["parts"]), session
    rows = [json.loads(line) for line in (out / "throughput.jsonl").read_text().splitlines()]
    measured = {(r["game"], r["backend"], r.get("kernels")) for r in rows}
    assert {("pong", "ale-vector", None), ("ms_pacman", "cule-cuda", "mapper"), ("pong", "cule-cuda", "game")} <= measured
    assert all(r["fps"] > 0 for r in rows)
    import tarfile
    with tarfile.open(out / "train.tar.gz") as tar:
        assert {f"train_{t}/summary.json" for t in ("a2c_vtrace", "ppo", "rainbow")} <= set(tar.getnames())
        summaries = {t: json.load(tar.extractfile(f"train_{t}/summary.json")) for t in ("ppo", "rainbow")}
    # each trainer's curve is timed to its target, and its agents kept for tests afterwards
    assert summaries["ppo"]["target"] == 18 and summaries["rainbow"]["target"] == -10
    assert all(s["settings"]["test_later"] for s in summaries.values()), summaries
    assert (out / "throughput.png").is_file()
    files = sorted(p.name for p in out.iterdir())
    assert len(files) <= 8, files
    log = (out / "session.log").read_text()
    for part in PARTS:
        assert f"=== {part.name} (" in log
    assert "kernels for sm_" in log
