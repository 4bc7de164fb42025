#!/usr/bin/env bash
# AFIN on a CUDA GPU through GoMLX's XLA backend, with the x86-64 afin
# binary built elsewhere (no Go toolchain needed here).
#
#   deploy/gpu/run.sh check  [CHECKPOINT]   GPU forward vs the native CPU forward, same weights
#   deploy/gpu/run.sh train  RUN_DIR [afin train flags...]
#                                           start (or resume) training in the background
#   deploy/gpu/run.sh status RUN_DIR        the run's last log lines
#
# It needs a PJRT CUDA plugin, found by cuda_env.sh (the xla_cuda_plugin.so
# of the Python package jax-cuda13-pjrt or jax-cuda12-pjrt, with the NVIDIA
# libraries of the same Python environment). Set PJRT_PLUGIN to the .so to
# skip the search, AFIN_BIN to the binary (default bin/afin, built
# with `CGO_ENABLED=1 go build -tags xla -o bin/afin ./cmd/afin`: the XLA
# backend needs cgo and is linked only with the xla tag).
set -euo pipefail

AFIN_BIN=${AFIN_BIN:-bin/afin}
[ -x "$AFIN_BIN" ] || { echo "run.sh: no afin binary at $AFIN_BIN (build with: CGO_ENABLED=1 go build -tags xla -o bin/afin ./cmd/afin)" >&2; exit 2; }

# shellcheck source=deploy/gpu/cuda_env.sh
. "$(dirname "$0")/cuda_env.sh"
afin_cuda_env || { echo "run.sh: no CUDA backend" >&2; exit 2; }
export AFIN_ENGINE=gomlx
echo "run.sh: GOMLX_BACKEND=$GOMLX_BACKEND" >&2

cmd=${1:-check}
shift || true
case "$cmd" in
  check)
    ck=${1:-checkpoints/small-full}
    "$AFIN_BIN" checkpoint engines "$ck" --batches 8 --tasks 8 --d-max 16 --n-max 256
    ;;
  train)
    run=${1:?usage: run.sh train RUN_DIR [afin train flags]}
    shift
    resume=()
    [ -f "$run/training_state.safetensors" ] && resume=(--resume)
    mkdir -p "$run"
    # setsid: the run outlives this shell (and the session that started it).
    setsid nohup "$AFIN_BIN" train --out "$run" "${resume[@]}" --checkpoint-seconds 180 "$@" \
      >>"$run/train.out" 2>&1 < /dev/null &
    echo "run.sh: training in the background (pid $!), log $run/train.jsonl, output $run/train.out"
    ;;
  status)
    run=${1:?usage: run.sh status RUN_DIR}
    tail -n 5 "$run/train.jsonl" 2>/dev/null || echo "no log yet"
    tail -n 3 "$run/train.out" 2>/dev/null || true
    ;;
  *)
    echo "run.sh: unknown command $cmd (check, train, status)" >&2; exit 2 ;;
esac
