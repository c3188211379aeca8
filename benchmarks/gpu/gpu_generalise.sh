#!/usr/bin/env bash
# Held-out training runs for issue 49 on one GPU, without backfilling (backfilling does not pay
# on the GPU yet, RESULTS.md §17.4): two seed sweeps side by side, each stopped at SECONDS (an
# epoch cut short is lost; the finished ones are kept):
#   sdsc-split  SDSC-SP2, `--split train` (training sequences from the first 50 % of the jobs,
#               validation from the next 10 %), the shipped sdsc-none recipe otherwise
#               (jaxsched/models/sdsc-none/README.md) without its --job-slice 10000;
#   lublin-big  a generated Lublin-1 trace of GG_LUBLIN_JOBS (default 100,000) jobs, generator
#               seed 7 (`jaxsched trace generate lublin --preset lublin-1 --jobs N --seed 7`,
#               deterministic: regenerate it on the CPU for the test), `--split train`, the
#               lublin1-none recipe (100 sequences per epoch, no filter).
#   sdsc-resid  (issue 49 §22.5; not in the default rows) SDSC-SP2, `--split train`, a residual
#               policy over F1 (`--residual f1`: untrained it IS F1; its epoch 0 is validated
#               and kept as a candidate), 100 sequences per epoch, no filter, policy learning
#               rate 3e-4 (the PPO default: small steps away from F1), validation every epoch;
#   lublin-resid the same on the generated Lublin-1 trace of lublin-big.
#   For the longer residual run, from the checkout's top with the trace in .gpu/shared:
#     GG_ROWS="sdsc-resid lublin-resid" bash benchmarks/gpu/gpu_generalise.sh "$OUT" 500 .gpu/shared
#   (device tool: carry [".gpu"], timeout_s 600), then on the CPU as for the other rows:
#     benchmarks/paper/generalise.py TRACE runs/gpu-generalise/sdsc-resid --sequences 200 --paper
#
#   bash benchmarks/gpu/gpu_generalise.sh OUT SECONDS SHARED [SEEDS]
#
# OUT: a folder (created) that receives ROW.log (the training output) and ROW.tgz per row
# (every seed's log.jsonl, run.json, flags.json, validation files and the checkpoints of its
# GG_KEEP (default 3) best epochs on its own validation: for the choice on the validation split
# and the test on the test split, both on the CPU with benchmarks/paper/generalise.py), and gen.log
# (the sha256 of the generated trace's job lines, to check the CPU's copy: regenerate it under
# the same file name, lublin-1-100000-seed7.swf, so that the test's jobs_seen check knows it). 5 files, well under the device
# tool's 8 files of 16 MB. SHARED: a folder with traces/SDSC-SP2-1998-4.2-cln.swf.gz (e.g. a
# copy of ../shared in .gpu/shared: ../shared does not travel). SEEDS: default 0-15.
# GG_EPOCHS / GG_TRAJECTORIES / GG_VAL / GG_LUBLIN_JOBS shrink the rows for a smoke test on a
# CPU, GG_EXTRA adds flags to every row (e.g. "--length 16 --val-jobs 64"); GG_ROWS picks rows
# (default both). Python: $PYTHON (default python3, with jax[cuda12]);
# the checkout on PYTHONPATH. XLA_PYTHON_CLIENT_MEM_FRACTION: each process's share (0.4).
set -u
OUT=${1:?usage: gpu_generalise.sh OUT SECONDS SHARED [SEEDS]}
LIMIT=${2:?seconds}
SHARED=${3:?a folder with traces/SDSC-SP2-1998-4.2-cln.swf.gz}
SEEDS=${4:-0-15}
KEEP=${GG_KEEP:-3}
ROWS=${GG_ROWS-sdsc-split lublin-big}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
source "$(dirname "$0")/common.sh" # cd to the checkout; PY, PYTHONPATH, part()
SDSC="$SHARED/traces/SDSC-SP2-1998-4.2-cln.swf.gz"
export XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.4}
RUNS=${GG_RUNS:-runs/gpu-generalise} # run folders (git ignores runs/), not sent back
rm -rf "$RUNS"
mkdir -p "$RUNS"
LUBLIN="$RUNS/lublin-1-${GG_LUBLIN_JOBS:-100000}-seed7.swf"

start=$(date +%s)
case " $ROWS " in *" lublin-big "* | *" lublin-resid "*)
  "$PY" -m jaxsched.cli trace generate lublin --preset lublin-1 --jobs "${GG_LUBLIN_JOBS:-100000}" \
    --seed 7 --out "$LUBLIN" >"$OUT/gen.log" 2>&1
  echo "sha256 of the job lines: $(grep -v '^;' "$LUBLIN" | sha256sum)" >>"$OUT/gen.log"
  ;;
esac
gen=$(($(date +%s) - start))

recipe() { # row: trace and flags, epochs last (the time limit stops the sweep first)
  case $1 in
  sdsc-split) echo "$SDSC --split train --backfill none --trajectories 100 --filter paper \
    --filter-epochs 20 --validate 2 --val-sequences 20 --epochs 80 --pi-lr 1e-3" ;;
  lublin-big) echo "$LUBLIN --split train --backfill none --trajectories 100 \
    --validate 2 --val-sequences 20 --epochs 80 --pi-lr 1e-3" ;;
  sdsc-resid) echo "$SDSC --split train --backfill none --trajectories 100 --residual f1 \
    --residual-temperature 0.5 --validate 1 --val-sequences 20 --epochs 200 --pi-lr 3e-4" ;;
  lublin-resid) echo "$LUBLIN --split train --backfill none --trajectories 100 --residual f1 \
    --residual-temperature 0.5 --validate 1 --val-sequences 20 --epochs 200 --pi-lr 3e-4" ;;
  *) echo "gpu_generalise.sh: unknown row $1" >&2 && exit 2 ;;
  esac
}

train() { # row, then more flags
  local row=$1
  shift
  # shellcheck disable=SC2046  # the recipe is a list of words
  set -- $(recipe "$row") "$@"
  extra=()
  [ -n "${GG_EPOCHS:-}" ] && extra+=(--epochs "$GG_EPOCHS")
  [ -n "${GG_TRAJECTORIES:-}" ] && extra+=(--trajectories "$GG_TRAJECTORIES")
  [ -n "${GG_VAL:-}" ] && extra+=(--val-sequences "$GG_VAL")
  # shellcheck disable=SC2206  # GG_EXTRA: more flags, a list of words (smoke tests)
  [ -n "${GG_EXTRA:-}" ] && extra+=(${GG_EXTRA})
  timeout -s TERM -k 10 "$LIMIT" "$PY" -m jaxsched.cli train rlscheduler "$@" "${extra[@]}" \
    --compat rlscheduler --keep-checkpoints 0 --no-compare --no-progress
}

t0=$(date +%s)
for row in $ROWS; do
  train "$row" --seeds "$SEEDS" --out "$RUNS/$row" >"$OUT/$row.log" 2>&1 &
done
wait
echo "generation: $gen s, training: $(($(date +%s) - t0)) s" | tee -a "$OUT/gen.log"

for row in $ROWS; do # the KEEP best validated checkpoints of each seed, and its logs
  "$PY" - "$OUT" "$RUNS" "$row" "$KEEP" <<'EOF'
import sys, tarfile
from pathlib import Path

sys.path.insert(0, "benchmarks/paper")
from score_checkpoints import top_validated  # noqa: E402

out, runs, row, keep = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
seeds = sorted((runs / row).glob("seed-*"), key=lambda d: int(d.name.split("-")[1]))
with tarfile.open(out / f"{row}.tgz", "w:gz") as tar:
    if (runs / row / "flags.json").exists():  # the sweep's flags (validation settings)
        tar.add(runs / row / "flags.json", arcname=f"{row}/flags.json")
    for seed in seeds:
        best = top_validated(seed, keep, "bsld")
        print(f"{row} {seed.name}: best validated epochs {sorted(best)}")
        names = {f"checkpoint_{e:08d}.ckpt" for e in best}
        for f in seed.iterdir():  # logs, settings, the chosen checkpoints (no filter cache)
            if f.suffix in (".json", ".jsonl") or f.name in names:
                tar.add(f, arcname=f"{row}/{seed.name}/{f.name}")
EOF
done
echo "total: $(($(date +%s) - start)) s"
ls -la "$OUT"
