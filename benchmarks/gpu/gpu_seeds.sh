#!/usr/bin/env bash
# More seeds for the three RLScheduler rows whose learned margin is below the paper's as a point
# estimate (RESULTS.md §14): Table V's SDSC-SP2 without backfilling and Lublin-1 with the
# reference's backfilling, Table VIII's SDSC-SP2 with it (max-over-users fairness). Each row is
# one seed sweep (`jaxsched train rlscheduler --seeds`: one compiled update per epoch for all
# seeds) with the recipe of the shipped model (its README), the three sweeps side by side on one
# GPU, each stopped at SECONDS (an epoch cut short is lost; the finished ones are kept).
#
#   bash benchmarks/gpu/gpu_seeds.sh OUT SECONDS SHARED [SEEDS]
#
# OUT: a folder (created) that receives, per row, ROW-0.tgz, ROW-1.tgz, ... (GS_PART, default
# 16, seeds each: the device tool sends back no file over 16 MB, and 40 seeds of SDSC-SP2
# without backfilling came to 16.9 MB in one): every seed's log, settings and
# validation files and the checkpoints of its GS_KEEP (default 3) best epochs on the run's own
# validation (seed 2, as `jaxsched train --validate` draws it: 20 sequences every 2 epochs
# without backfilling, 10 every 4 with it, where a validation costs most), and ROW.log, the
# training output. Choosing among those candidates on 50 validation sequences, and the test on
# 100 fresh sequences, are left to the CPU (`benchmarks/paper/score_checkpoints.py`,
# `benchmarks/paper/rlscheduler_tables.py`): the test sequences play no part here. SHARED: a folder
# with traces/SDSC-SP2-1998-4.2-cln.swf.gz (the paths in each run.json are written relative to
# the checkout, as ../shared/... when SHARED is ../shared). SEEDS: default 20-35.
# GS_EPOCHS / GS_TRAJECTORIES / GS_VAL override every row's epochs, sequences per epoch and
# validation sequences (for a smoke test on a CPU); GS_ROWS picks rows (default all three).
# GS_CPU_ROWS: rows trained on the host's CPU cores instead, beside the GPU's sweeps, where a
# backfilling row is cheaper per seed (RESULTS.md §17.4): one process per seed of GS_CPU_SEEDS
# (default SEEDS), each `--seed S` alone (the same run as seed S of a sweep) on its own core
# from GS_CPU_FIRST_CORE (default 2) on; their training output is gathered into ROW.log.
# XLA_PYTHON_CLIENT_MEM_FRACTION: each GPU process's share of the GPU's memory (default 0.3).
# Python: $PYTHON (default python3); the checkout on PYTHONPATH.
set -u
OUT=${1:?usage: gpu_seeds.sh OUT SECONDS SHARED [SEEDS]}
LIMIT=${2:?seconds}
SHARED=${3:?a folder with traces/SDSC-SP2-1998-4.2-cln.swf.gz}
SEEDS=${4:-20-35}
KEEP=${GS_KEEP:-3}
ROWS=${GS_ROWS-sdsc-none lublin1-bf sdsc-bf-fair}
CPU_ROWS=${GS_CPU_ROWS:-}
CPU_SEEDS=${GS_CPU_SEEDS:-$SEEDS}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
source "$(dirname "$0")/common.sh" # cd to the checkout; PY, PYTHONPATH, part()
SDSC="$SHARED/traces/SDSC-SP2-1998-4.2-cln.swf.gz"
export XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.3} # three sweeps share it
RUNS=${GS_RUNS:-runs/gpu-seeds} # the run folders (git ignores runs/), started afresh, not sent back
rm -rf "$RUNS"

recipe() { # row: the trace and the shipped model's flags (its README), epochs last
  case $1 in
  sdsc-none) echo "$SDSC --backfill none --trajectories 100 --job-slice 10000 --filter paper \
    --filter-epochs 20 --validate 2 --val-sequences 20 --epochs 24" ;;
  lublin1-bf) echo "traces/lublin-1.swf --backfill rlscheduler --trajectories 50 \
    --validate 4 --val-sequences 10 --epochs 60" ;;
  sdsc-bf-fair) echo "$SDSC --backfill rlscheduler --metric fairness --user-feature \
    --length 128 --trajectories 50 --job-slice 10000 --filter paper --filter-epochs 20 \
    --validate 4 --val-sequences 10 --epochs 80" ;;
  *) echo "gpu_seeds.sh: unknown row $1" >&2 && exit 2 ;;
  esac
}

seed_list() { # "20-35" or "3,5,8-9" -> one seed per line
  local part
  for part in ${1//,/ }; do
    case $part in *-*) seq "${part%-*}" "${part#*-}" ;; *) echo "$part" ;; esac
  done
}

train() { # row, then the flags that say which seeds: the recipe with the common flags
  local row=$1
  shift
  # shellcheck disable=SC2046  # the recipe is a list of words
  set -- $(recipe "$row") "$@"
  extra=()
  [ -n "${GS_EPOCHS:-}" ] && extra+=(--epochs "$GS_EPOCHS")
  [ -n "${GS_TRAJECTORIES:-}" ] && extra+=(--trajectories "$GS_TRAJECTORIES")
  [ -n "${GS_VAL:-}" ] && extra+=(--validate 2 --val-sequences "$GS_VAL")
  "${pin[@]}" timeout -s TERM -k 10 "$LIMIT" "$PY" -m jaxsched.cli train rlscheduler "$@" "${extra[@]}" \
    --compat rlscheduler --pi-lr 1e-3 --keep-checkpoints 0 --no-compare --no-progress
}

start=$(date +%s)
pin=() # what train runs its command under: nothing on the GPU, `taskset -c CORE` on a host core
for row in $ROWS; do
  train "$row" --seeds "$SEEDS" --out "$RUNS/$row" >"$OUT/$row.log" 2>&1 &
done
core=${GS_CPU_FIRST_CORE:-2}
for row in $CPU_ROWS; do
  mkdir -p "$RUNS/$row.logs"
  for s in $(seed_list "$CPU_SEEDS"); do
    (
      export JAX_PLATFORMS=cpu
      if command -v taskset >/dev/null; then pin=(taskset -c "$core"); fi
      train "$row" --seed "$s" --out "$RUNS/$row/seed-$s"
    ) >"$RUNS/$row.logs/seed-$s.log" 2>&1 &
    core=$((core + 1))
  done
done
wait
echo "training: $(($(date +%s) - start)) s"
for row in $CPU_ROWS; do
  for f in "$RUNS/$row.logs"/*.log; do echo "== $f" && cat "$f"; done >"$OUT/$row.log"
done

for row in $ROWS $CPU_ROWS; do # the KEEP best validated checkpoints of each seed, and its logs
  "$PY" - "$OUT" "$RUNS" "$row" "$KEEP" "${GS_PART:-16}" <<'EOF'
import sys, tarfile
from pathlib import Path

sys.path.insert(0, "benchmarks/paper")
from score_checkpoints import top_validated  # noqa: E402

out, runs, row = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
keep, part = int(sys.argv[4]), int(sys.argv[5])
metric = "fairness" if row.endswith("-fair") else "bsld"
seeds = sorted((runs / row).glob("seed-*"), key=lambda d: int(d.name.split("-")[1]))
for k in range(0, len(seeds), part):
    with tarfile.open(out / f"{row}-{k // part}.tgz", "w:gz") as tar:
        for seed in seeds[k : k + part]:
            best = top_validated(seed, keep, metric)
            print(f"{row} {seed.name}: best validated epochs {sorted(best)}")
            names = {f"checkpoint_{e:08d}.ckpt" for e in best}
            for f in seed.iterdir():  # logs, settings, the chosen checkpoints (no filter cache)
                if f.suffix in (".json", ".jsonl") or f.name in names:
                    tar.add(f, arcname=f"{row}/{seed.name}/{f.name}")
EOF
done
ls -la "$OUT"
