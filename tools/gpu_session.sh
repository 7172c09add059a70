#!/usr/bin/env bash
# Everything a GPU session measures, in one command: builds cule on the GPU
# machine, accounts for the CPU backend's threads on all cores, runs the GPU tests, the scaling benchmark with ale-py's vector env
# on the same machine's CPU cores, forks per second, a 57-game batch, the CPU backend against ale-py on
# all cores at 16 to 1,024 environments, and an Nsight Compute profile of
# cule_run, and writes every figure and log into one folder.
#
#   bash tools/gpu_session.sh [FOLDER]      # default: $OUT, else runs/gpu_session
#
# On this project's lent GPU machines (no internet; torch, CuPy, nvcc, ncu,
# scikit-build-core and pybind11 installed), ale-py and gymnasium travel as
# wheels in .whl/ (docs/cuda.md, "Running on a GPU"). GAMES and ENVS override
# the benchmark's games and environment counts; TEST_GAMES the tested games
# (NVRTC takes one to two minutes a game, in parallel across games), TESTS a
# pytest -k expression that picks among the GPU tests;
# STEPS picks the parts to run after the build, in its order, where a session
# has little device time (default: threads gpu_tests scale forks mixed fps_scale ncu;
# also cpu_fps, the five-game same-run comparison on all cores).
set -uo pipefail
DIR=${1:-${OUT:-runs/gpu_session}}
GAMES=${GAMES:-pong breakout ms_pacman space_invaders}
ENVS=${ENVS:-1024 4096 16384 65536}
TEST_GAMES=${TEST_GAMES:-pong,breakout,ms_pacman,space_invaders,pitfall,video_pinball}
STEPS=${STEPS:-threads gpu_tests scale forks mixed fps_scale ncu}
TESTS=${TESTS:-}
mkdir -p "$DIR"
exec > >(tee "$DIR/session.log") 2>&1
export PYTHONUNBUFFERED=1
step() { echo; echo "=== $* ($(date +%T))"; }

step "machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
nproc
lscpu | grep -E "Model name|^CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|L2 cache|L3 cache|NUMA node\(s\)"
if ls .whl/*.whl > /dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi

step "build"
python3 -m pip install -q --no-build-isolation --no-deps -e . || { echo "build failed"; exit 1; }
python3 -c "import cule, torch; print('cule', cule.__version__, 'torch', torch.__version__, torch.cuda.get_device_name())"

threads() {
  step "CPU backend's threads on all $(nproc) cores: where a step's time goes, against ale-py"
  python3 -m cule.benchmarks.threads --games pong --envs 64 256 1024 --threads 1 2 4 8 "$(nproc)" --ale \
      --output-dir "$DIR/threads"
}

cpu_fps() {
  step "CPU backend against ale-py on all $(nproc) cores: five games, 16 and 64 envs, and one thread"
  python3 -m cule.benchmarks.fps --repeats 3 --output-dir "$DIR/fps"
}

precompile() {
  [ -n "${PRECOMPILED:-}" ] && return
  step "kernels into CuPy's cache"
  # the tested games, and those the GPU tests always use (saved states, the mixed batch)
  python3 -m cule.kernels --precompile $(printf '%s\n' $GAMES ${TEST_GAMES//,/ } pitfall2 klax montezuma_revenge \
      | sort -u) --jobs "$(nproc)"
  PRECOMPILED=1
}

gpu_tests() {
  precompile
  step "GPU tests ($TEST_GAMES)"
  CULE_GPU_GAMES=$TEST_GAMES python3 -m pytest -q -rf -p no:cacheprovider tests/test_cuda_gpu.py ${TESTS:+-k "$TESTS"} \
      2>&1 | tee "$DIR/test_cuda_gpu.log"
}

scale() {
  precompile
  step "scaling ($GAMES; $ENVS envs) against ale-py on $(nproc) CPU threads"
  python3 -m cule.benchmarks.gpu_scale --games $GAMES --envs $ENVS --output-dir "$DIR"
}

forks() {
  step "forks on the GPU against ale-py's restoreState"
  python3 -m cule.benchmarks.forks --device cuda --num-envs 4096 --output-dir "$DIR/forks"
}

mixed() {
  step "57 games in one batch on the GPU (32 envs each) against ale-py's vector envs in turn"
  python3 -m cule.kernels --precompile $(python3 -c "import cule; print(*cule.ATARI_57)") --jobs "$(nproc)"
  python3 -m cule.benchmarks.mixed --device cuda --per-game 32 --steps 50 --output-dir "$DIR/mixed"
}

fps_scale() {
  step "CPU backend at scale: cule and ale-py on all $(nproc) cores, 16 to 1,024 envs"
  python3 -m cule.benchmarks.fps --games pong ms_pacman --scale --output-dir "$DIR/fps_scale"
}

ncu() {
  precompile
  step "Nsight Compute: cule_run, pong, 4096 envs"
  command ncu --kernel-name cule_run --launch-skip 6 --launch-count 1 --section LaunchStats --section Occupancy \
      --section WarpStateStats --section SchedulerStats \
      --metrics smsp__thread_inst_executed_per_inst_executed.ratio,smsp__warps_active.avg.pct_of_peak_sustained_active \
      python3 -m cule.benchmarks.gpu_scale --games pong --envs 4096 --warmup 2 --steps 2 --ale-envs 0 \
        --output-dir /tmp/ncu_run > "$DIR/ncu_cule_run.txt" 2>&1
  tail -80 "$DIR/ncu_cule_run.txt"
}

for part in $STEPS; do
  case $part in
    threads|cpu_fps|gpu_tests|scale|forks|mixed|fps_scale|ncu) "$part" ;;
    *) echo "unknown part '$part' in STEPS (threads cpu_fps gpu_tests scale forks mixed fps_scale ncu)"; exit 2 ;;
  esac
done
step "done"
ls -la "$DIR"
