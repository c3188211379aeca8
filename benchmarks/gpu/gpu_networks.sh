#!/usr/bin/env bash
# RLScheduler's network study (paper Table IV, Fig. 8) on one accelerator within a time limit:
# Lublin-1 and SDSC-SP2 train side by side as two processes on the one GPU, each running the
# networks one after the other (`benchmarks/paper/rlscheduler_networks.py --train --batched`: three
# seeds batched per network, one compiled update for all of them). Each process stops at
# SECONDS (an epoch cut short is lost; the finished ones are logged), then the tables and plots
# are printed and the runs packed into OUT/networks.tgz (their logs, settings and validation
# files, without the checkpoints, whose random weights would not fit in the 16 MiB that a
# device run may send back: `rlscheduler_networks.py --root` redraws the tables from them).
#
#   bash benchmarks/gpu/gpu_networks.sh OUT SECONDS SDSC_TRACE [DEVICE_NAME]
#
# OUT: a folder for the logs, tables, plots and the archive (created); SECONDS: the training
# limit of each trace's process; SDSC_TRACE: SDSC-SP2's SWF file (trained on its first 10,000
# jobs, the paper's protocol); Lublin-1 is the checkout's traces/lublin-1.swf. The paper's
# settings: 20 epochs of 100 sequences of 256 jobs, no backfilling, seeds 1-3 (NETS_EPOCHS,
# NETS_TRAJECTORIES, NETS_SEEDS and NETS_NETS override them). LeNet comes last: with flax's
# convolutions (before nets.Conv1x1) its epoch cost ten times the others'. Two processes, not
# one per network: ten processes on one H200 ran each epoch 2-4 times slower than two did
# (RESULTS.md §17.2), and the minutes on the plot's time axis are those of the GPU shared by
# the two. Python: $PYTHON (default python3); the checkout on PYTHONPATH.
set -u
OUT=${1:?usage: gpu_networks.sh OUT SECONDS SDSC_TRACE [DEVICE_NAME]}
LIMIT=${2:?seconds}
SDSC=${3:?SDSC-SP2 trace}
DEVICE=${4:-one shared GPU}
EPOCHS=${NETS_EPOCHS:-20}
TRAJ=${NETS_TRAJECTORIES:-100}
SEEDS=${NETS_SEEDS:-1-3}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SDSC=$(cd "$(dirname "$SDSC")" && pwd)/$(basename "$SDSC") # the paths as given, before the cd
source "$(dirname "$0")/common.sh" # cd to the checkout; PY, PYTHONPATH, part()
export XLA_PYTHON_CLIENT_MEM_FRACTION=0.45 # two processes share the GPU's memory
ROOT="$OUT/networks"
NETS=${NETS_NETS:-kernel,mlp_v1,mlp_v2,mlp_v3,lenet}

study() { # trace job_slice nets [options...]: train one network's runs, or print the table
  local trace=$1 slice=$2 nets=$3
  shift 3
  "$PY" benchmarks/paper/rlscheduler_networks.py --trace "$trace" --job-slice "$slice" \
    --nets "$nets" --seeds "$SEEDS" --epochs "$EPOCHS" --trajectories "$TRAJ" \
    --root "$ROOT" --device "$DEVICE" "$@"
}
export -f study
export PY SEEDS EPOCHS TRAJ ROOT DEVICE
PAIRS=("traces/lublin-1.swf 0 lublin" "$SDSC 10000 sdsc")

start=$(date +%s)
for pair in "${PAIRS[@]}"; do
  read -r trace slice name <<<"$pair"
  timeout -s TERM -k 10 "$LIMIT" bash -c 'study "$@"' _ "$trace" "$slice" "$NETS" \
    --train --batched >"$OUT/train-$name.log" 2>&1 &
done
wait
echo "training: $(($(date +%s) - start)) s" | tee "$OUT/tables.txt"
for pair in "${PAIRS[@]}"; do
  read -r trace slice name <<<"$pair"
  study "$trace" "$slice" "$NETS" --plot "$OUT/$name.png" |
    tee -a "$OUT/tables.txt"
done
tar czf "$OUT/networks.tgz" --exclude='*.ckpt' -C "$OUT" networks && rm -rf "$ROOT"
ls -la "$OUT"
