#!/usr/bin/env bash
# Issue 48 on one GPU: the synchronous batch step against rows that step asynchronously, with
# the reference's backfilling, side by side in one process per part; about 7 minutes of wall
# time (each part has its own limit, so a part that fails or runs out of time costs only that).
#
#   bash benchmarks/gpu/gpu_async.sh [OUT] [SHARED]
#
# OUT: a folder for the log and JSON files (default $OUT, else runs/gpu-async; created);
# SHARED: the shared folder with traces/lublin_256.swf.gz (default ../shared).
# Python: $PYTHON (default python3) with jax (CUDA), flax, optax, chex, numpy, as for
#   benchmarks/gpu/gpu_suite.sh (neither script installs anything); the checkout on PYTHONPATH.
# ASYNC_SIZES=cpu: tiny sizes for a check of the script on a CPU (minutes, not figures).
# Prints:
# 1. RLScheduler's env with backfilling (Lublin-1, 256-job sequences, compat, random valid
#    actions, 128 decisions per row per compiled loop), steps/s: 'closed' = the synchronous
#    path and 'async' = the asynchronous rows at B = 1,024 and 16,384 ('x 1st' = async / sync
#    at the same B, same process), then the async rows alone at B = 256 and 4,096 (the
#    synchronous figures there: RESULTS.md §17 and issue 48); compile times apart; peak
#    device memory per row (KiB/row: the process's peak so far / B);
# 2. SchedInspector's env with backfilling (synchronous only: its asynchronous rows are not
#    built), steps/s at B = 1,024 and 4,096;
# 3. one PPO epoch with backfilling at the paper's size (100 sequences x 256 jobs, 80 + 80
#    steps, slot prefixes): synchronous rollout, then asynchronous, and their ratio.
set -u
OUT=${1:-${OUT:-runs/gpu-async}}
SHARED=${2:-../shared}
source "$(dirname "$0")/common.sh" # cd to the checkout; PY, PYTHONPATH, part()
mkdir -p "$OUT"
LOG="$OUT/async.log"
if [ "${ASYNC_SIZES:-gpu}" = cpu ]; then
  B_BOTH=16 B_ASYNC=32 STEPS=16 LEN=64 B_SI="16" TRAJ=4 PI=2 F=3
else # each batch size compiles its own loop: both paths at two sizes, the async rows at all four
  B_BOTH=1024,16384 B_ASYNC=256,4096 STEPS=128 LEN=256 B_SI="1024 4096" TRAJ=100 PI=80 F=1
fi

part device 20 bash -c "nvidia-smi -L 2>/dev/null; $PY -c 'import jax; \
print(jax.devices(), \"jax\", jax.__version__)'"
part rlscheduler_env_bf 130 "$PY" benchmarks/speed/env_throughput.py --batch $B_BOTH \
  --steps $STEPS --length $LEN --backfill rlscheduler --env closed,async --repeats 1 \
  --json "$OUT/env_async.json"
part rlscheduler_env_bf_async 100 "$PY" benchmarks/speed/env_throughput.py --batch $B_ASYNC \
  --steps $STEPS --length $LEN --backfill rlscheduler --env async --repeats 1 \
  --json "$OUT/env_async_more.json"
for b in $B_SI; do
  part "schedinspector_env_bf_B$b" 30 "$PY" benchmarks/speed/schedinspector_env.py --throughput \
    --traces "$SHARED/traces" --batch "$b" --steps 128 --backfills rlscheduler
done
part ppo_epoch_bf 110 "$PY" benchmarks/speed/train_speed.py --epochs 1 --no-full-width \
  --trajectories $TRAJ --length $LEN --pi-iters $PI --v-iters $PI --backfill rlscheduler \
  --rollout sync,async --env-backfill "" --run none --json "$OUT/train_async.json"
echo "log: $LOG"
