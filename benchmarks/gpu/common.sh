# shellcheck shell=bash
# The setup every GPU suite (benchmarks/gpu/*.sh) repeats, sourced by each in place of its own:
#   source "$(dirname "$0")/common.sh"
# After it the working folder is the checkout (paths in the suites are relative to it), PY is
# $PYTHON (default python3), the checkout is first on PYTHONPATH and Python's output unbuffered;
# `part NAME LIMIT COMMAND...` runs one part of a suite under its own time limit (LIMIT x $F
# seconds; F default 1), appending what it prints and its exit status to $LOG, so that a part that
# fails or runs out of time costs only its own limit.
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
PY=${PYTHON:-python3}
export PYTHONPATH=".${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1

part() { # name limit command...
  local name=$1 limit=$(($2 * ${F:-1})) start
  shift 2
  start=$(date +%s)
  echo "=== $name (limit ${limit} s): $*" | tee -a "$LOG"
  timeout -s INT -k 10 "$limit" "$@" 2>&1 | tee -a "$LOG"
  echo "=== $name: exit ${PIPESTATUS[0]} after $(($(date +%s) - start)) s" | tee -a "$LOG"
}
