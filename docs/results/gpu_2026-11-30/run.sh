#!/bin/bash
# One GPU run, headline first: frames/s of today's kernels (4 games, 4,096 / 16,384 envs; pong at 65,536 and
# ale-py's vector env beside it), A2C+V-trace on Pong with CuLE's settings (snapshots kept for tests run
# afterwards on a CPU), then the jitted JAX loop with what time is left.
set -u
export PYTHONUNBUFFERED=1
T0=$(date +%s)
DEADLINE=${DEADLINE:-580}
left() { echo $(( DEADLINE - ($(date +%s) - T0) )); }
exec > >(tee -a $OUT/run.log) 2>&1
date -u +%FT%TZ
if [ -z "${DRY:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
  cp -r src/cule/. /tmp/site/cule/
  export PYTHONPATH=/tmp/site CULE_KERNEL_DIR=$PWD/.prebuilt/kernels
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  DEV=cuda; ENVS="4096 16384"; BIG=65536; ALE=1024; TENVS=1200; FRAMES=13320000; JENVS=16384; DR=
else
  DEV=cpu; ENVS="8"; BIG=8; ALE=8; TENVS=40; MIN=0.3; FRAMES=20000; JENVS=8; DR=--dry-run
fi
nproc; lscpu | grep "Model name"
python3 -c "import torch, cule; print('torch', torch.__version__, 'cule', cule.__file__)"
python3 -c "from cule import _core; from cule.kernels import KernelBuild, find_binary; print('prebuilt sm_90:', {c: bool(find_binary(KernelBuild(c), 'sm_90')) for c in _core.mappers})"

echo "=== throughput $(date -u +%T), $(left) s left"
timeout 80 python3 -m cule.benchmarks.gpu_scale --games pong breakout ms_pacman space_invaders --envs $ENVS \
    --warmup 2 --seconds 1.5 --min-steps 3 --ale-envs 0 --output-dir $OUT/scale $DR
echo "=== pong at $BIG envs, ale-py's vector env beside $(date -u +%T), $(left) s left"
timeout 55 python3 -m cule.benchmarks.gpu_scale --games pong --envs $BIG --warmup 2 --seconds 2 --min-steps 3 \
    --ale-envs $ALE --ale-threads $(nproc) --ale-steps 50 --output-dir $OUT/scale $DR
rm -f $OUT/scale/gpu_scale.png

echo "=== train $(date -u +%T), $(left) s left"
T=$(( $(left) - 62 ))
[ -z "${DRY:-}" ] && MIN=$(python3 -c "print(round(($T - 60) / 60, 2))")
echo "train: timeout $T s, --minutes $MIN"
timeout $T python3 -m cule.benchmarks.train --device $DEV --num-envs $TENVS --set num_batches=20 --set lockstep=True \
    --set reset_mode=cache --set optimizer=rmsprop --set learning_rate=6.5e-4 --set normalize_obs=True \
    --set vf_coef=1.0 --set start_steps=400 --set checkpoint_every=1000 --test-every 1776000 --test-episodes 30 \
    --test-later --frames $FRAMES --minutes $MIN --eval-episodes 0 --target 18 --quiet --output-dir /tmp/train
echo "train exit $? at $(date -u +%T)"; tail -3 /tmp/train/log.csv; ls -la /tmp/train /tmp/train/snapshots
python3 -c "import torch; p='/tmp/train/checkpoint.pt'; s=torch.load(p, weights_only=False); s.pop('optimizer', None); torch.save(s, p)"
(cd /tmp && tar cf - --exclude=tensorboard train | split -b 16000000 -d - $OUT/train.tar.)
ls -la $OUT

L=$(left)
echo "=== jax $(date -u +%T), $L s left"
if [ $L -ge 45 ]; then
  timeout $(( L - 5 )) python3 -m cule.benchmarks.jax_loop --device $DEV --envs $JENVS --ale-envs 64 \
      --ale-threads $(nproc) --steps 50 --repeats 2 --output-dir $OUT/jax
fi
echo "=== done $(date -u +%T), $(left) s left"
