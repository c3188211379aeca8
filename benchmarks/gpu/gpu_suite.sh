#!/usr/bin/env bash
# The speed benchmarks on an accelerator, as one script with a time limit for each part, so that
# a few lent GPU minutes give every figure (a part that fails or runs out of time costs only its
# own limit). Each part prints what it measured, side by side with the reference implementation
# stepped in the same process where a checkout is given; everything goes to OUT/suite.log.
#
#   bash benchmarks/gpu/gpu_suite.sh OUT [REFS] [SHARED] [TRAIN_SECONDS]
#
# OUT: a folder for the log, the JSON files and the split-window run (created);
# REFS: a folder holding clones of DIR-LAB/deep-batch-scheduler, DIR-LAB/SchedInspector and
#   hongzimao/deeprm under those names with '/' -> '+' (optional: no reference timings without);
# SHARED: the shared folder with traces/lublin_256.swf.gz (default ../shared);
# TRAIN_SECONDS: time for the last part, split-window DBF training at the spec's settings on 64
#   environments (default 180; 0 skips it), cut so that the whole script ends within
#   $SUITE_SECONDS of its start when that is set. A rerun with the same OUT resumes that run.
#   SUITE_TRAIN=networks trains RLScheduler's network study instead (Table IV: the five policy
#   networks, three seeds batched per network, 20 epochs of 100 sequences on Lublin-1, under
#   OUT/networks; a rerun continues it) and prints its table.
# Python: $PYTHON (default python3) with jax, flax, optax, chex, numpy; the checkout on PYTHONPATH.
# SUITE_SIZES=cpu: batch sizes for a 2-core CPU and three times the time limits (the same parts,
#   for a side-by-side on one day).
set -u
OUT=${1:?usage: gpu_suite.sh OUT [REFS] [SHARED] [TRAIN_SECONDS]}
REFS=${2:-}
SHARED=${3:-../shared}
TRAIN_S=${4:-180}
source "$(dirname "$0")/common.sh" # cd to the checkout; PY, PYTHONPATH, part()
mkdir -p "$OUT"
LOG="$OUT/suite.log"
if [ "${SUITE_SIZES:-gpu}" = cpu ]; then
  B_RLS=64,256 B_SI=256 B_SW=16,256 B_DC=1024 A2C=64 B_PPO=256 DRAS=sdsc F=3
else
  B_RLS=1024,8192 B_SI=2048 B_SW=256,2048 B_DC=1024,16384 A2C=64,256 B_PPO=4096 DRAS=sdsc,theta F=1
fi
DEADLINE=$(($(date +%s) + ${SUITE_SECONDS:-100000}))

ref() { # the reference checkout's option, if it is there
  [ -n "$REFS" ] && [ -d "$REFS/$2" ] && echo "$1 $REFS/$2"
}

part device 30 bash -c "nvidia-smi -L; $PY -c 'import jax, flax, optax, chex; \
print(jax.devices(), \"jax\", jax.__version__, \"flax\", flax.__version__, \
\"optax\", optax.__version__, \"chex\", chex.__version__)'"
# shellcheck disable=SC2046
part rlscheduler_env 120 "$PY" benchmarks/speed/env_throughput.py --batch $B_RLS \
  --backfill none,rlscheduler --repeats 2 --json "$OUT/env_throughput.json" \
  $(ref --reference DIR-LAB+deep-batch-scheduler) --reference-steps 3000
# shellcheck disable=SC2046
part schedinspector_env 50 "$PY" benchmarks/speed/schedinspector_env.py --throughput \
  --traces "$SHARED/traces" --batch $B_SI --steps 512 \
  $(ref --reference DIR-LAB+SchedInspector) --reference-steps 5000
part splitwindow_env 50 "$PY" benchmarks/speed/splitwindow_env.py --shared "$SHARED" \
  --batch $B_SW --episodes 0 --skip-baselines --json "$OUT/splitwindow_env.json"
# shellcheck disable=SC2046
part datacenter_env 50 "$PY" benchmarks/speed/datacenter_env.py --batch $B_DC --steps 200 \
  --a2c-envs $A2C $(ref --deeprm hongzimao+deeprm)
part dras_update 60 "$PY" benchmarks/speed/dras_update.py --sizes $DRAS --variants pg,dql
part rlscheduler_ppo_epoch 100 "$PY" benchmarks/speed/train_speed.py --epochs 1 --no-full-width \
  --env-batch $B_PPO --env-backfill none --run none --json "$OUT/train_speed.json"
left=$((DEADLINE - $(date +%s) - 20))
[ "$left" -lt "$TRAIN_S" ] && TRAIN_S=$left
TRAIN_S=$((TRAIN_S / F)) # part() multiplies the limit by F again: training gets TRAIN_S itself
if [ "$((TRAIN_S * F))" -gt 30 ] && [ "${SUITE_TRAIN:-splitwindow}" = networks ]; then
  part networks "$TRAIN_S" "$PY" benchmarks/paper/rlscheduler_networks.py --train --batched \
    --nets kernel,mlp_v1,mlp_v2,mlp_v3,lenet --seeds 1-3 --epochs 20 --trajectories 100 \
    --root "$OUT/networks"
  part networks_table 60 "$PY" benchmarks/paper/rlscheduler_networks.py --seeds 1-3 \
    --trajectories 100 --root "$OUT/networks"
elif [ "$((TRAIN_S * F))" -gt 30 ]; then
  resume=""
  [ -f "$OUT/splitwindow-h20-t0/run.json" ] && resume=--resume
  part splitwindow_train "$TRAIN_S" "$PY" -m jaxsched train splitwindow \
    "$SHARED/traces/lublin_256.swf.gz" --head 20 --tail 0 --envs 64 --epochs 10000 \
    --validate 5 --val-episodes 20 --no-progress --out "$OUT/splitwindow-h20-t0" $resume
fi
