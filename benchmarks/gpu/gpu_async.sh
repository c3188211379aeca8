#!/usr/bin/env bash
# Issue 48 on one GPU: the synchronous batch step against rows that step asynchronously, with
# the reference's backfilling, for RLScheduler's and SchedInspector's environments at every
# batch size from 256 to 16,384, and a PPO epoch; about 6 minutes of wall time, at most 9.5
# (each part has its own limit, so a part that fails or runs out of time costs only that).
#
#   bash benchmarks/gpu/gpu_async.sh [OUT] [SHARED]
#
# OUT: a folder for the log and JSON files (default $OUT, else runs/gpu-async; created);
# SHARED: the shared folder with traces/lublin_256.swf.gz (default ../shared).
# Python: $PYTHON (default python3) with jax (CUDA), flax, optax, chex, numpy, as for
#   benchmarks/gpu/gpu_suite.sh (neither script installs anything); the checkout on PYTHONPATH.
# ASYNC_SIZES=cpu: tiny sizes for a check of the script on a CPU (minutes, not figures).
# Prints (every path in its own process, the batch sizes ascending, so that the device's peak
# memory so far is the current size's: 'peak ... per row' = that peak / B):
# 1. RLScheduler's env with backfilling (Lublin-1, 256-job sequences, compat, random valid
#    actions, 128 decisions per row per compiled loop), steps/s at B = 256, 1,024, 4,096 and
#    16,384: 'closed' = the synchronous batch step (one process), 'async' = the asynchronous
#    rows (another), compile times apart, async loop iterations per decision, KiB per row;
# 2. SchedInspector's env with backfilling (lublin_256, 128-job sequences, SJF base, random
#    accept/reject), the same batch sizes: 'sync' then 'async', each in its own process;
# 3. one PPO epoch with backfilling at the paper's size (100 sequences x 256 jobs, 80 + 80
#    steps, slot prefixes): synchronous rollout, then asynchronous, and their ratio.
# The async/sync ratios per batch size are computed afterwards from the four JSON files.
set -u
OUT=${1:-${OUT:-runs/gpu-async}}
SHARED=${2:-../shared}
source "$(dirname "$0")/common.sh" # cd to the checkout; PY, PYTHONPATH, part()
mkdir -p "$OUT"
LOG="$OUT/async.log"
if [ "${ASYNC_SIZES:-gpu}" = cpu ]; then
  B=16,32 STEPS=16 SI_STEPS=16 LEN=64 TRAJ=4 PI=2 F=4
else # each batch size compiles its own loop (~8-16 s each on an H200)
  B=256,1024,4096,16384 STEPS=128 SI_STEPS=128 LEN=256 TRAJ=100 PI=80 F=1
fi

part device 20 bash -c "nvidia-smi -L 2>/dev/null; $PY -c 'import jax; \
print(jax.devices(), \"jax\", jax.__version__)'"
for mode in closed async; do
  part "rlscheduler_env_bf_$mode" 120 "$PY" benchmarks/speed/env_throughput.py --batch $B \
    --steps $STEPS --length $LEN --backfill rlscheduler --env $mode --repeats 1 \
    --json "$OUT/rls_$mode.json"
done
for mode in sync async; do
  part "schedinspector_env_bf_$mode" 100 "$PY" benchmarks/speed/schedinspector_env.py --throughput \
    --traces "$SHARED/traces" --batch $B --steps $SI_STEPS --backfills rlscheduler \
    --env $mode --json "$OUT/si_$mode.json"
done
part ppo_epoch_bf 110 "$PY" benchmarks/speed/train_speed.py --epochs 1 --no-full-width \
  --trajectories $TRAJ --length $LEN --pi-iters $PI --v-iters $PI --backfill rlscheduler \
  --rollout sync,async --env-backfill "" --run none --json "$OUT/train_async.json"
part ratios 20 "$PY" - "$OUT" <<'EOF'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
def rows(name):
    p = out / name
    if not p.is_file():
        return {}
    return {r["batch"]: r for r in json.loads(p.read_text())["rows"]}
for title, s, a in (("rlscheduler", "rls_closed.json", "rls_async.json"),
                    ("schedinspector", "si_sync.json", "si_async.json")):
    sync, asy = rows(s), rows(a)
    for b in sorted(set(sync) | set(asy)):
        x, y = sync.get(b, {}), asy.get(b, {})
        kib = lambda r: f"{r['peak_bytes_per_row'] / 1024:,.0f}" if r.get("peak_bytes_per_row") else "-"
        sx, sy = x.get("steps_per_s"), y.get("steps_per_s")
        print(f"{title:<15} B={b:>6}  sync {sx or 0:>12,.0f}  async {sy or 0:>12,.0f}  "
              f"async/sync {sy / sx if sx and sy else float('nan'):6.2f}  "
              f"KiB/row sync {kib(x)} async {kib(y)}")
EOF
echo "log: $LOG"
