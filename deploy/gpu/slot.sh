#!/usr/bin/env bash
# What one GPU slot buys: train AFIN on the GoMLX engine for a fixed wall
# time (compiles included), evaluate the checkpoint held-out on the host's
# cores, and leave two files a device call brings back: slot.json (what
# was trained, how fast, how accurate) and slot-checkpoint.tar.gz (the
# checkpoint to commit under checkpoints/, with its train.jsonl and logs).
#
#   deploy/gpu/slot.sh [--tiny] [OUT_DIR]        (OUT_DIR: $OUT when not given)
#
# Settings (environment): SLOT_CONFIG (paper or small; paper), SLOT_SECONDS
# (the training's wall seconds, compiles included, given to --time-budget;
# 480, tiny 15), SLOT_PRECISION (bf16; tiny fp32), SLOT_FLAGS (more `afin
# train` flags, e.g. "--batch 32 --micro-batches 4"), SLOT_RESUME
# (a checkpoint folder to continue from: its training state is copied and
# resumed; one that has reached its steps needs SLOT_FLAGS="--steps N"),
# SLOT_KEEP_STATE (1: pack training_state.safetensors too, for a
# later slot to resume; 0), EVAL_GRID (full), EVAL_TASKS (4), AFIN_BIN
# (bin/afin; --tiny builds it with plain `go build` when absent).
#
# --tiny runs the whole script on GoMLX's Go backend with the small
# config for a few seconds: CI runs it so a typo never costs device time.
# Exit status: 0 when training and evaluation passed, 1 when one did not,
# 2 on bad usage or when no GPU backend is found.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 2

tiny=0 out=
for a in "$@"; do
  case $a in
    --tiny) tiny=1 ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 0 ;;
    -*) echo "slot.sh: unknown flag $a (--tiny, --help)" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "slot.sh: one output folder only" >&2; exit 2; }; out=$a ;;
  esac
done
out=${out:-${OUT:-}}
[ -n "$out" ] || { echo "slot.sh: give the output folder or set \$OUT" >&2; exit 2; }
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)

AFIN_BIN=${AFIN_BIN:-bin/afin}
config=${SLOT_CONFIG:-paper}
keep_state=${SLOT_KEEP_STATE:-0}
eval_args=(--grid "${EVAL_GRID:-full}" --tasks "${EVAL_TASKS:-4}" --json)
if [ "$tiny" = 1 ]; then
  export GOMLX_BACKEND=go
  config=${SLOT_CONFIG:-small}
  seconds=${SLOT_SECONDS:-15}
  precision=${SLOT_PRECISION:-fp32}
  train_args=(--batch 4 --micro-batches 1 --d-max 4 --n-max 16)
  eval_args=(--grid small --tasks 1 --proposals 200 --json)
  if [ ! -x "$AFIN_BIN" ]; then
    go build -o "$AFIN_BIN" ./cmd/afin || exit 2
  fi
  device="cpu (tiny mode: GoMLX's pure Go backend)"
else
  seconds=${SLOT_SECONDS:-480}
  precision=${SLOT_PRECISION:-bf16}
  train_args=()
  # shellcheck source=deploy/gpu/cuda_env.sh
  . "$here/cuda_env.sh"
  afin_cuda_env || { echo "slot.sh: no CUDA backend (--tiny runs without one)" >&2; exit 2; }
  [ -x "$AFIN_BIN" ] || { echo "slot.sh: no afin binary at $AFIN_BIN (CGO_ENABLED=1 go build -tags xla -o bin/afin ./cmd/afin)" >&2; exit 2; }
  device=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
  device=${device:-unknown GPU (no nvidia-smi)}
fi
# shellcheck source=deploy/gpu/json.sh
. "$here/json.sh"
# shellcheck disable=SC2206 # SLOT_FLAGS is a list of words on purpose
[ -n "${SLOT_FLAGS:-}" ] && train_args+=($SLOT_FLAGS)

work=$(mktemp -d "${TMPDIR:-/tmp}/afin-slot.XXXXXX") || exit 2
run=$work/run
logs=$work/logs
mkdir -p "$run" "$logs"
pack() {
  local files=(config.json train.jsonl)
  local f
  for f in "$run"/model*.safetensors "$run"/model.safetensors.index.json "$run"/ood.json; do
    [ -f "$f" ] && files+=("$(basename "$f")")
  done
  [ "$keep_state" = 1 ] && [ -f "$run/training_state.safetensors" ] && files+=(training_state.safetensors)
  cp "$logs"/* "$run"/ 2>/dev/null
  for f in train.out eval.json eval.err; do [ -f "$run/$f" ] && files+=("$f"); done
  tar -czf "$out/slot-checkpoint.tar.gz" -C "$run" "${files[@]}" 2>/dev/null
}
train_pid=
cleanup() { [ -n "$train_pid" ] && kill -TERM "$train_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
trap 'echo "slot.sh: stopped by a signal" >&2; exit 143' TERM INT

resume=() start_step=0
if [ -n "${SLOT_RESUME:-}" ]; then
  cp "$SLOT_RESUME"/* "$run"/ || exit 2
  resume=(--resume)
  tail -n 1 "$run/train.jsonl" >"$work/last.json" 2>/dev/null
  start_step=$(jget "$work/last.json" step)
  start_step=${start_step:-0}
fi

# ---- train ----------------------------------------------------------------

t0=$(date +%s)
echo "slot.sh: $device; config $config, $precision, $seconds s of training -> $out" >&2
# The time budget ends the schedule with the slot; timeout is the guard
# should a compile outlast it (SIGTERM writes the last checkpoint).
timeout --signal=TERM --kill-after=30 $((seconds + 60)) \
  env AFIN_ENGINE=gomlx "$AFIN_BIN" train --config "$config" --decoder gaussian --out "$run" "${resume[@]}" \
  --time-budget "$seconds" --compile-ahead --precision "$precision" --eval-every 0 --log-every 10 \
  --checkpoint-seconds 120 "${train_args[@]}" >"$logs/train.out" 2>&1 &
train_pid=$!
wait "$train_pid"
train_rc=$?
train_pid=
t1=$(date +%s)
tail -n 3 "$logs/train.out" >&2

# ---- evaluate, on the host's cores (the native engine: one program per
# held-out shape would each compile on the GPU) ------------------------------

eval_rc=1
if [ -f "$run/config.json" ]; then
  AFIN_ENGINE=native "$AFIN_BIN" checkpoint eval "$run" "${eval_args[@]}" >"$logs/eval.json" 2>"$logs/eval.err"
  eval_rc=$?
fi
t2=$(date +%s)
pack

# ---- the summary --------------------------------------------------------------

tail -n 1 "$run/train.jsonl" >"$work/last.json" 2>/dev/null
field() { jget "$work/last.json" "$1"; }
evaljson=null
[ "$eval_rc" = 0 ] && [ -s "$logs/eval.json" ] && evaljson=$(cat "$logs/eval.json")
status=ok reason=
[ "$train_rc" = 0 ] || reason="afin train exited $train_rc (see train.out in the archive)"
[ "$eval_rc" = 0 ] || reason="${reason:+$reason; }afin checkpoint eval exited $eval_rc (eval.err in the archive)"
if [ "$(field step)" = "$start_step" ]; then
  # A resumed run that had reached its Steps trains none: the time budget
  # refits a schedule only once it runs.
  reason="${reason:+$reason; }no step trained: the run had reached its steps; give SLOT_FLAGS=\"--steps N\" with N above $start_step"
fi
[ -z "$reason" ] || status=failed
commit=${BENCH_GIT_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}
cat >"$out/slot.json" <<EOF
{"status": "$status", "reason": $(jstr "$reason"), "device": $(jstr "$device"), "git_commit": $(jstr "$commit"), "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
 "config": $(jstr "$config"), "precision": $(jstr "$precision"), "flags": $(jstr "${SLOT_FLAGS:-}"), "resumed_from": $(jstr "${SLOT_RESUME:-}"),
 "slot_seconds": $seconds, "train_exit": $train_rc, "train_wall_seconds": $((t1 - t0)), "eval_exit": $eval_rc, "eval_wall_seconds": $((t2 - t1)),
 "step": $(jnum "$(field step)"), "train_seconds": $(jnum "$(field seconds)"), "programs": $(jnum "$(field programs)"),
 "compile_seconds": $(jnum "$(field compile_seconds)"), "loss": $(jnum "$(field loss)"),
 "archive": "slot-checkpoint.tar.gz", "eval": $evaljson}
EOF
[ -z "$reason" ] || echo "slot.sh: $reason" >&2
echo "slot.sh: $status; step $(field step) after $((t1 - t0)) s; $out/slot.json, $out/slot-checkpoint.tar.gz" >&2
[ "$status" = ok ]
