#!/usr/bin/env bash
# afin's GPU bench (issue 33): one call that writes one JSON file.
#
#   deploy/gpu/bench.sh [OUT.json]           on the GPU machine (default $OUT/bench.json)
#   deploy/gpu/bench.sh --tiny [OUT.json]    anywhere, in about a minute: GoMLX's pure Go
#                                            backend at a tiny size (CI; BENCH_TINY=1 too)
#
# Stages, in order (names as in the JSON's "stages"; the measurements the
# slot is for first):
#   compile_probe       one bucket's paper-config training programs (d ≤ 4, N ≤ 16: each
#                       block's forward and backward, the loss head) compiled one at a
#                       time as two steps run: each block program's compile seconds
#                       alone, the largest optimised HLO's size, and XLA's buffer
#                       assignment beside the memory model's peak
#   train_gomlx_<P>     paper-config training on the GoMLX engine, TRAIN_STEPS steps of 32 × 4,
#                       precision P (the first of TRAIN_PRECISIONS here, the others last),
#                       its programs compiled ahead in parallel: the whole run's compile
#                       wall time, each block program's compile seconds beside the
#                       census of them (afin train --census), tasks/s with and without
#                       the compiles, the host's share of a step
#   peer_torch          the authors' PyTorch trainer, same steps and batch (peer.sh)
#   infer_gomlx         `afin checkpoint throughput`: 10,000 tasks at (8, 64), paper config
#   infer_native        the same on the native engine, all host cores (NATIVE_TASKS tasks)
#   check_small_full, check_small_flow   `afin checkpoint engines` on both shipped checkpoints
#   suite_native, suite_gomlx   the synthetic suite's AFIN units on each engine
# Each stage runs under `timeout` (its own limit, cut to what is left of
# BENCH_SECONDS); one that fails records its exit code and the tail of its
# stderr, and the run goes on. The JSON is rewritten after every stage, so
# a killed run leaves what was done. Device memory is sampled every 200 ms
# by nvidia-smi during the training and inference stages (peak and the
# idle reading before). Stage logs (stdout, stderr, train.jsonl) go to
# bench-logs.tar.gz beside the JSON.
#
# The GPU run needs bin/afin built with `CGO_ENABLED=1 go build -tags xla
# -o bin/afin ./cmd/afin` and the PJRT CUDA plugin that cuda_env.sh finds;
# the PyTorch stage needs deploy/gpu/peer/AFINs (fetch_peer.sh). Both are
# git-ignored: name them in the device call's carry. --tiny builds bin/afin
# with plain `go build` when it is absent.
#
# Settings (environment): BENCH_STAGES (a subset, in the order to run:
# compile_probe peer_torch infer_gomlx infer_native check_small_full
# train check_small_flow suite_native suite_gomlx train_more; train is the first
# precision, train_more the others), AFIN_BIN, BENCH_SECONDS (whole run;
# 300, tiny 150), TRAIN_STEPS (20), TRAIN_PRECISIONS ("bf16 tf32"), TRAIN_MEMORY_BUDGET
# (GiB, unset: the binary's default), CHECK_BATCHES (8), TRAIN_FLAGS (more `afin train` flags),
# PEER_MAX_SECONDS (40), NATIVE_TASKS (640), SUITE_PROFILE (quick, tiny
# smoke), the per-stage limits CHECK_TIMEOUT (50), TRAIN_TIMEOUT (150),
# PROBE_TIMEOUT (120), PEER_TIMEOUT (70), INFER_TIMEOUT (45), NATIVE_TIMEOUT (30), SUITE_TIMEOUT
# (40), and AFIN_CACHE_DIR (reference posteriors; unset: a fresh folder, so
# the first suite stage computes them).
#
# Exit status: 0 when every stage passed or was skipped, 1 when one did
# not, 2 on bad usage or when no GPU backend is found.
set -uo pipefail # not -e: a failing stage is recorded and the run goes on

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 2

tiny=${BENCH_TINY:-0}
out=
for a in "$@"; do
  case $a in
    --tiny) tiny=1 ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 0 ;;
    -*) echo "bench.sh: unknown flag $a (--tiny, --help)" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "bench.sh: one output path only" >&2; exit 2; }; out=$a ;;
  esac
done
[ "$tiny" = 1 ] || tiny=0
if [ -z "$out" ]; then
  [ -n "${OUT:-}" ] || { echo "bench.sh: give the output path (OUT.json) or set \$OUT" >&2; exit 2; }
  out=$OUT/bench.json
fi
mkdir -p "$(dirname "$out")" || exit 2
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
logs=$(dirname "$out")/bench-logs
work=$(mktemp -d "${TMPDIR:-/tmp}/afin-bench.XXXXXX") || exit 2
rm -rf "$logs" && mkdir -p "$logs" "$work/stages" || exit 2

t_start=$(date +%s)
mem_pid= st_pid=
cleanup() {
  [ -n "$st_pid" ] && kill -TERM "$st_pid" 2>/dev/null
  [ -n "$mem_pid" ] && kill "$mem_pid" 2>/dev/null
  # One archive beside the JSON, not a folder of logs: a device call
  # brings back a limited number of files (on the H100 run, 8 of them,
  # and the training logs were left behind).
  tar -czf "$logs.tar.gz" -C "$(dirname "$logs")" "$(basename "$logs")" 2>/dev/null && rm -rf "$logs"
  rm -rf "$work"
}
trap cleanup EXIT
# The stage in flight already stands in the JSON as "killed" (stage_begin).
trap 'echo "bench.sh: stopped by a signal" >&2; exit 143' TERM INT

# ---- settings -------------------------------------------------------------

AFIN_BIN=${AFIN_BIN:-bin/afin}
TRAIN_STEPS=${TRAIN_STEPS:-20}
TRAIN_PRECISIONS=${TRAIN_PRECISIONS:-bf16 tf32}
CHECK_TIMEOUT=${CHECK_TIMEOUT:-50}
TRAIN_TIMEOUT=${TRAIN_TIMEOUT:-150}
PROBE_TIMEOUT=${PROBE_TIMEOUT:-120}
PEER_TIMEOUT=${PEER_TIMEOUT:-70}
PEER_MAX_SECONDS=${PEER_MAX_SECONDS:-40}
INFER_TIMEOUT=${INFER_TIMEOUT:-45}
NATIVE_TIMEOUT=${NATIVE_TIMEOUT:-30}
NATIVE_TASKS=${NATIVE_TASKS:-640}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-40}
MIN_STAGE=5 # seconds: a stage with less left is skipped
if [ "$tiny" = 1 ]; then
  budget=${BENCH_SECONDS:-150}
  check_args=(--batches 2 --tasks 2 --d-max 4 --n-max 16)
  train_steps=2
  train_args=(--config small --batch 4 --micro-batches 1 --d-max 4 --n-max 16 --steps 2)
  probe_args=(--config small --batch 4 --micro-batches 1 --d-max 4 --n-max 16 --steps 2)
  tasks_per_step=4
  peer_args=(--device cpu --config tiny --steps 2 --batch 4 --micro-batches 1)
  infer_args=(--config small --random-weights 1 --d 4 --n 8 --batch 25)
  infer_tasks=50 native_tasks=50
  suite_profile=${SUITE_PROFILE:-smoke}
else
  budget=${BENCH_SECONDS:-300}
  check_args=(--batches "${CHECK_BATCHES:-8}" --tasks 8 --d-max 16 --n-max 256)
  train_steps=$TRAIN_STEPS
  train_args=(--config paper --batch 32 --micro-batches 4 --d-max 16 --n-max 256 --steps "$TRAIN_STEPS")
  probe_args=(--config paper --batch 32 --micro-batches 4 --d-max 4 --n-max 16 --steps 2)
  tasks_per_step=128
  peer_args=(--device cuda --steps "$TRAIN_STEPS" --max-seconds "$PEER_MAX_SECONDS")
  infer_args=(--config paper --random-weights 1 --d 8 --n 64 --batch 500)
  infer_tasks=10000 native_tasks=$NATIVE_TASKS
  suite_profile=${SUITE_PROFILE:-quick}
fi
train_args+=(--decoder gaussian --seed 1 --eval-every 0 --log-every 1 --checkpoint-every 0
  --checkpoint-seconds 0 --compile-ahead)
# The probe compiles lazily, one program at a time (each block program's
# compile alone); the training stages compile the run's programs ahead,
# in parallel.
probe_args+=(--decoder gaussian --seed 1 --eval-every 0 --log-every 1 --checkpoint-every 0
  --checkpoint-seconds 0)
[ -n "${TRAIN_MEMORY_BUDGET:-}" ] && train_args+=(--memory-budget "$TRAIN_MEMORY_BUDGET")
# shellcheck disable=SC2206 # TRAIN_FLAGS is a list of words on purpose
[ -n "${TRAIN_FLAGS:-}" ] && train_args+=($TRAIN_FLAGS)
deadline=$((t_start + budget))
read -r -a precisions <<<"$TRAIN_PRECISIONS"
[ ${#precisions[@]} -gt 0 ] || { echo "bench.sh: TRAIN_PRECISIONS is empty" >&2; exit 2; }
# suite_native before suite_gomlx: it computes the reference posteriors a
# fresh cache lacks, so the GoMLX wall time is the units'.
all_stages="compile_probe peer_torch infer_gomlx infer_native check_small_full train check_small_flow suite_native suite_gomlx train_more"
read -r -a stages <<<"${BENCH_STAGES:-$all_stages}"
for st in "${stages[@]}"; do
  [[ " $all_stages " == *" $st "* ]] || { echo "bench.sh: unknown stage $st in BENCH_STAGES (valid: $all_stages)" >&2; exit 2; }
done
export AFIN_CACHE_DIR=${AFIN_CACHE_DIR:-$work/cache}

# ---- JSON helpers -----------------------------------------------------------

have_py=0
command -v python3 >/dev/null 2>&1 && have_py=1

# shellcheck source=deploy/gpu/json.sh
. "$here/json.sh"

# valid_json FILE: FILE holds one JSON value (strictly, with Python;
# without it, text between braces).
valid_json() {
  [ -s "$1" ] || return 1
  if [ "$have_py" = 1 ]; then
    python3 -c 'import json, sys
def refuse(c): raise ValueError(c)
json.load(open(sys.argv[1], encoding="utf-8"), parse_constant=refuse)' "$1" 2>/dev/null
    return
  fi
  local s
  s=$(tr -d ' \n\r\t' <"$1")
  [[ $s == \{*\} ]]
}

# calc EXPR: awk arithmetic on numbers, "" when an operand is missing or a
# division is by zero.
calc() {
  awk -v e="$1" 'BEGIN {
    n = split(e, t, " "); if (n == 3) { a = t[1]; op = t[2]; b = t[3] } else exit
    if (a !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/ || b !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) exit
    if (op == "/") { if (b + 0 == 0) exit; printf "%.6g\n", a / b }
    else if (op == "-") printf "%.6g\n", a - b
    else if (op == "*") printf "%.6g\n", a * b
  }'
}

now() { date +%s.%N; }

# ---- the machine ------------------------------------------------------------

have_gpu=0
if [ "$tiny" = 1 ]; then
  export GOMLX_BACKEND=go
  if [ ! -x "$AFIN_BIN" ]; then
    echo "bench.sh: building $AFIN_BIN (plain go build: GoMLX's Go backend only)" >&2
    go build -o "$AFIN_BIN" ./cmd/afin || exit 2
  fi
  device="cpu (tiny mode: GoMLX's pure Go backend)"
else
  # shellcheck source=deploy/gpu/cuda_env.sh
  . "$here/cuda_env.sh"
  afin_cuda_env || { echo "bench.sh: no CUDA backend (--tiny runs without one)" >&2; exit 2; }
  [ -x "$AFIN_BIN" ] || { echo "bench.sh: no afin binary at $AFIN_BIN (CGO_ENABLED=1 go build -tags xla -o bin/afin ./cmd/afin)" >&2; exit 2; }
  command -v nvidia-smi >/dev/null 2>&1 && have_gpu=1
  device=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
  device=${device:-unknown GPU (no nvidia-smi)}
fi
git_commit=${BENCH_GIT_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}
git_dirty=$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | head -c 1)
afin_version=$("$AFIN_BIN" version 2>&1 | tr '\n' ';')
cpu_model=$(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | sed 's/^[^:]*: *//')

# ---- device memory ----------------------------------------------------------

mem_idle= mem_peak= mem_samples=0
gpu_mem() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | tr -dc '0-9\n' | sort -n | tail -n 1; }
mem_start() {
  mem_idle= mem_peak= mem_samples=0
  [ "$have_gpu" = 1 ] || return 0
  mem_idle=$(gpu_mem)
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 >"$work/mem" 2>/dev/null &
  mem_pid=$!
}
mem_stop() {
  [ -n "$mem_pid" ] || return 0
  kill "$mem_pid" 2>/dev/null
  wait "$mem_pid" 2>/dev/null
  mem_pid=
  mem_peak=$(tr -dc '0-9\n' <"$work/mem" | sed '/^$/d' | sort -n | tail -n 1)
  mem_samples=$(grep -c '[0-9]' "$work/mem")
}
mem_fields() {
  printf '"gpu_memory_idle_mib": %s, "gpu_memory_peak_mib": %s, "gpu_memory_peak_above_idle_mib": %s, "gpu_memory_samples": %s' \
    "$(jnum "$mem_idle")" "$(jnum "$mem_peak")" "$(jnum "$(calc "$mem_peak - $mem_idle")")" "$(jnum "$mem_samples")"
}

# ---- stages -----------------------------------------------------------------

n_stage=0 failed=0
declare -A S # figures the summary compares

# stage_begin NAME: the stage's place in the JSON, holding "killed" until
# stage_record replaces it, so a run killed during a stage says which.
stage_begin() {
  n_stage=$((n_stage + 1))
  st_file=$work/stages/$(printf '%02d' "$n_stage")-$1
  st_cmd= st_rc= st_wall=0 st_limit= st_reason= st_status=
  printf '%s: {"status": "killed", "error": "the run ended during this stage"}' "$(jstr "$1")" >"$st_file"
  write_json
}

# stage_run NAME LIMIT CMD...: runs CMD under timeout, its output in
# $logs/NAME.out and .err; sets st_status (ok, error, timeout, skipped),
# st_rc, st_wall, st_limit, st_reason, st_cmd.
stage_run() {
  local name=$1 limit=$2 left t0
  shift 2
  stage_begin "$name"
  st_cmd=$*
  left=$((deadline - $(date +%s) - 12)) # 10 s for timeout's KILL, 2 to write the JSON
  ((limit > left)) && limit=$left
  st_limit=$limit
  if ((left < MIN_STAGE)); then
    st_status=skipped st_reason="out of time: $((left + 12)) s left of BENCH_SECONDS=$budget"
    echo "bench.sh: $name skipped ($st_reason)" >&2
    return 0
  fi
  echo "bench.sh: $name (limit $limit s)" >&2
  t0=$(now)
  # In the background, so a signal to this script is handled at once
  # (bash runs traps only between foreground commands).
  timeout -k 10 "$limit" "$@" >"$logs/$name.out" 2>"$logs/$name.err" </dev/null &
  st_pid=$!
  wait "$st_pid"
  st_rc=$?
  st_pid=
  st_wall=$(calc "$(now) - $t0")
  case $st_rc in
    0) st_status=ok ;;
    124 | 137) st_status=timeout st_reason="stopped by timeout after $limit s" ;;
    *) st_status=error ;;
  esac
  # XLA can be verbose: keep the last 256 KiB of a log.
  if [ "$(wc -c <"$logs/$name.err")" -gt 262144 ]; then
    tail -c 262144 "$logs/$name.err" >"$work/err" && mv "$work/err" "$logs/$name.err"
  fi
}

# stage_record NAME [EXTRA]: writes the stage's JSON (the status fields,
# EXTRA's fields, and its stdout: embedded when it is JSON) and rewrites
# the output file.
stage_record() {
  local name=$1 extra=${2:-} f=$st_file err result=null tail=
  if [ -f "$logs/$name.out" ]; then
    if valid_json "$logs/$name.out"; then result=$(cat "$logs/$name.out"); else tail=$(tail -c 2000 "$logs/$name.out"); fi
  fi
  err=$st_reason
  if [ "$st_status" = error ] || [ "$st_status" = timeout ]; then
    failed=1
    err="${err:+$err; }exit $st_rc: $(tail -n 15 "$logs/$name.err" 2>/dev/null | cut -c1-400)"
  fi
  {
    printf '%s: {"status": %s, "rc": %s, "seconds": %s, "limit_s": %s, "command": %s' \
      "$(jstr "$name")" "$(jstr "$st_status")" "$(jnum "$st_rc")" "$(jnum "$st_wall")" "$(jnum "$st_limit")" "$(jstr "$st_cmd")"
    [ -n "$err" ] && printf ', "error": %s' "$(jstr "$err")"
    [ -n "$extra" ] && printf ', %s' "$extra"
    [ -n "$tail" ] && printf ', "stdout_tail": %s' "$(jstr "$tail")"
    printf ', "result": %s}' "$result"
  } >"$f"
  write_json
}

# summary_json: the side-by-side figures, from what the stages measured.
summary_json() {
  local p=${TRAIN_PRECISIONS%% *}
  printf '{"train_precision": %s, "afin_tasks_per_s_with_compile": %s, "afin_tasks_per_s_after_compile": %s, ' \
    "$(jstr "$p")" "$(jnum "${S[train_wc]:-}")" "$(jnum "${S[train_after]:-}")"
  printf '"torch_tasks_per_s": %s, "torch_tasks_per_s_after_first": %s, "torch_tasks_per_s_process": %s, ' \
    "$(jnum "${S[peer]:-}")" "$(jnum "${S[peer_after]:-}")" "$(jnum "${S[peer_process]:-}")"
  printf '"ratio_with_compile": %s, "ratio_after_compile": %s, ' \
    "$(jnum "$(calc "${S[train_wc]:-x} / ${S[peer]:-x}")")" "$(jnum "$(calc "${S[train_after]:-x} / ${S[peer_after]:-x}")")"
  printf '"infer_gomlx_tasks_per_s": %s, "infer_gomlx_tasks_per_s_after_first": %s, "infer_native_tasks_per_s": %s, "infer_speedup": %s, "infer_speedup_after_first": %s}' \
    "$(jnum "${S[inf_gpu]:-}")" "$(jnum "${S[inf_gpu_after]:-}")" "$(jnum "${S[inf_native]:-}")" \
    "$(jnum "$(calc "${S[inf_gpu]:-x} / ${S[inf_native]:-x}")")" "$(jnum "$(calc "${S[inf_gpu_after]:-x} / ${S[inf_native]:-x}")")"
}

write_json() {
  local f first=1
  {
    printf '{\n  "device": %s,\n  "host_cpus": %s,\n  "host_cpu_model": %s,\n' \
      "$(jstr "$device")" "$(jnum "$(nproc 2>/dev/null)")" "$(jstr "$cpu_model")"
    printf '  "git_commit": %s,\n  "git_dirty": %s,\n  "afin_version": %s,\n  "date": %s,\n' \
      "$(jstr "$git_commit")" "$([ -n "$git_dirty" ] && echo true || echo false)" "$(jstr "$afin_version")" \
      "$(jstr "$(date -u -d "@$t_start" +%Y-%m-%dT%H:%M:%SZ)")"
    printf '  "tiny": %s,\n  "backend": %s,\n  "budget_seconds": %s,\n  "elapsed_seconds": %s,\n' \
      "$([ "$tiny" = 1 ] && echo true || echo false)" "$(jstr "${GOMLX_BACKEND:-}")" "$budget" "$(($(date +%s) - t_start))"
    printf '  "settings": {"train_steps": %s, "tasks_per_step": %s, "train_precisions": %s, "train_args": %s, "infer_tasks": %s, "native_tasks": %s, "suite_profile": %s},\n' \
      "$(jnum "$train_steps")" \
      "$tasks_per_step" "$(jstr "$TRAIN_PRECISIONS")" "$(jstr "${train_args[*]}")" "$infer_tasks" "$(jnum "$native_tasks")" "$(jstr "$suite_profile")"
    printf '  "notes": [%s, %s],\n' \
      "$(jstr "gpu_memory_* are nvidia-smi readings (MiB) every 200 ms: the peak minus the idle reading before the stage. XLA's PJRT client preallocates a pool (memory_fraction, 0.75 of the device by default) unless created with preallocate=false, so a GoMLX peak near that is the pool, not the program's need; PyTorch's own peak is in peer_torch.result.peak_memory_bytes.")" \
      "$(jstr "infer_native times NATIVE_TASKS tasks (a rate per task, like infer_gomlx's over its tasks); suite units_seconds sums the records' own seconds, which leave out reference posteriors.")"
    printf '  "stages": {'
    for f in "$work"/stages/*; do
      [ -f "$f" ] || continue
      ((first)) || printf ','
      first=0
      printf '\n    %s' "$(cat "$f")"
    done
    printf '\n  },\n  "summary": %s\n}\n' "$(summary_json)"
  } >"$out.part" && mv -f "$out.part" "$out"
}

# ---- the stages -------------------------------------------------------------

stage_check() {
  local name=$1 ck=$2
  stage_run "$name" "$CHECK_TIMEOUT" env AFIN_ENGINE=gomlx "$AFIN_BIN" checkpoint engines "$ck" "${check_args[@]}" --json
  stage_record "$name"
}

# train_fields RUN_DIR: the training stage's figures, from its train.jsonl
# (programs: the `programs` field, else the older `compiles`).
train_fields() {
  awk -v tps="$tasks_per_step" -v wall="$st_wall" '
    function num(key,   m) {
      if (!match($0, "\"" key "\": *-?[0-9][0-9.eE+-]*")) return ""
      m = substr($0, RSTART, RLENGTH); sub(/^[^:]*: */, "", m); return m
    }
    function j(x) { return x == "" ? "null" : x }
    function r(a, b) { return (a == "" || b == "" || b + 0 <= 0) ? "null" : sprintf("%.6g", a / b) }
    { s = num("step"); if (s == "") next; n++; S[n] = s; T[n] = num("seconds"); C[n] = num("compile_seconds")
      P[n] = num("programs"); if (P[n] == "") P[n] = num("compiles"); H[n] = num("host_update_seconds") }
    END {
      if (!n) { printf "\"steps\": 0, \"tasks\": 0"; exit }
      e = n; while (e > 1 && P[e - 1] == P[n]) e--
      tasks = S[n] * tps
      printf "\"steps\": %s, \"tasks\": %s, \"train_seconds\": %s, \"first_step_seconds\": %s, ", S[n], tasks, j(T[n]), j(T[1])
      printf "\"compile_seconds\": %s, \"programs\": %s, ", j(C[n]), j(P[n])
      # The host share of a step (micro-batch sums, AdamW, EMA), last window.
      printf "\"host_update_seconds\": %s, ", j(H[n])
      printf "\"tasks_per_s_with_compile\": %s, ", r(tasks, wall)
      # --compile-ahead compiles before the first step, outside the seconds
      # the log counts: those are the time of the steps alone.
      printf "\"tasks_per_s_excluding_compile\": %s, ", r(tasks, T[n])
      printf "\"steady_from_step\": %s, ", (e < n ? S[e] : "null")
      printf "\"tasks_per_s_after_compile\": %s", (e < n ? r((S[n] - S[e]) * tps, T[n] - T[e]) : "null")
    }' "$1/train.jsonl" 2>/dev/null || printf '"steps": 0, "tasks": 0'
}

# compile_fields STDERR: each block program's compile seconds, from the
# engine's "compiled <block> <pass> (<shape>) in S s" notes: the largest
# over buckets for each program, and the sum and count of all.
compile_fields() {
  awk '
    /afin train: compiled [a-z_]+ (forward|backward) \(/ {
      line = $0; sub(/.*afin train: compiled /, "", line)
      secs = line; sub(/.* in /, "", secs); sub(/ s$/, "", secs)
      prog = line; sub(/ \(.*/, "", prog)
      if (!(prog in M) || secs + 0 > M[prog] + 0) M[prog] = secs
      total += secs; n++
      if (!(prog in seen)) { seen[prog] = 1; order[++k] = prog }
    }
    END {
      printf "\"program_compiles\": %d, \"program_compile_seconds_sum\": %s, \"block_compile_seconds_max\": {", n, (n ? sprintf("%.6g", total) : "null")
      for (i = 1; i <= k; i++) printf "%s\"%s\": %s", (i > 1 ? ", " : ""), order[i], M[order[i]]
      printf "}"
    }' "$1" 2>/dev/null || printf '"program_compiles": 0, "program_compile_seconds_sum": null, "block_compile_seconds_max": {}'
}

# census_fields LINE: the totals of `afin train --census` (its last line).
census_fields() {
  local n k out=""
  for k in programs nodes matrix_products largest_nodes; do
    n=$(grep -o "\"$k\":[0-9]*" <<<"$1" | grep -o '[0-9]*$')
    out+="\"census_$k\": $(jnum "$n"), "
  done
  printf '%s' "${out%, }"
}

stage_train() {
  # The run folder is in the logs, so a killed bench keeps its train.jsonl.
  local p=$1 name=train_gomlx_$1 dir=$logs/train_gomlx_$1 fields census
  # What the run will compile, as --census counts it on the host (block
  # programs, their nodes, the largest), beside the compile times measured.
  census=$("$AFIN_BIN" train --census "${train_args[@]}" --precision "$p" 2>/dev/null | tail -n 1)
  mem_start
  stage_run "$name" "$TRAIN_TIMEOUT" env AFIN_ENGINE=gomlx "$AFIN_BIN" train "${train_args[@]}" --precision "$p" --out "$dir"
  mem_stop
  fields=$(train_fields "$dir")
  if [ "$p" = "${TRAIN_PRECISIONS%% *}" ]; then
    S[train_wc]=$(sed -n 's/.*"tasks_per_s_with_compile": \([-0-9.eE+]*\).*/\1/p' <<<"$fields")
    S[train_after]=$(sed -n 's/.*"tasks_per_s_after_compile": \([-0-9.eE+]*\).*/\1/p' <<<"$fields")
  fi
  stage_record "$name" "\"precision\": $(jstr "$p"), $fields, $(compile_fields "$logs/$name.err"), $(census_fields "$census"), $(mem_fields)"
  rm -f "$dir"/*.safetensors # the weights and optimiser state: not needed, and large
}

# stage_probe compiles one paper-config training program alone (the
# bucket d ≤ 4, N ≤ 16) and takes two steps: the compile time of one
# program, without the contention of compiling sixteen at once. XLA dumps
# the optimised program, whose size (instructions, fusions, library
# GEMMs) is the profile of that compile; the dump travels in the logs.
stage_probe() {
  local p=${precisions[0]} name=compile_probe dir=$logs/compile_probe dump=$logs/xla-dump fields hlo xla_bytes modelled
  mkdir -p "$dump"
  stage_run "$name" "$PROBE_TIMEOUT" env AFIN_ENGINE=gomlx XLA_FLAGS="${XLA_FLAGS:-} --xla_dump_to=$dump --xla_dump_hlo_as_text" \
    "$AFIN_BIN" train "${probe_args[@]}" --precision "$p" --out "$dir"
  fields=$(train_fields "$dir")
  # The memory model's peak for the training pass beside XLA's buffer
  # assignment of its largest block program (the largest "Total bytes
  # used" in the dump, read before hlo_fields keeps only that program's
  # text); the pass adds the weights, gradient sums, inputs and tokens
  # that live outside any one program.
  xla_bytes=$(cat "$dump"/* 2>/dev/null | grep -o 'Total bytes used: [0-9]*' | grep -o '[0-9]*$' | sort -n | tail -n 1)
  modelled=$(grep -o 'gaussian_loss pass ([^)]*): modelled peak [0-9]*' "$logs/$name.err" 2>/dev/null | grep -o '[0-9]*$' | sort -n | tail -n 1)
  hlo=$(hlo_fields "$dump")
  stage_record "$name" "\"precision\": $(jstr "$p"), $fields, $(compile_fields "$logs/$name.err"), $hlo, \"xla_total_bytes_used\": $(jnum "$xla_bytes"), \"modelled_peak_bytes\": $(jnum "$modelled"), \"xla_bytes_over_model\": $(jnum "$(calc "${xla_bytes:-x} / ${modelled:-x}")")"
  rm -f "$dir"/*.safetensors
}

# hlo_fields sizes the largest optimised program XLA dumped into $1 (none
# on the Go backend) and keeps only that file.
hlo_fields() {
  local f
  f=$(ls -S "$1"/*after_optimizations.txt 2>/dev/null | head -n 1)
  if [ -z "$f" ]; then
    rm -rf "$1"
    printf '"hlo_instructions": null, "hlo_fusions": null, "hlo_library_gemms": null'
    return
  fi
  find "$1" -type f ! -name "$(basename "$f")" -delete
  printf '"hlo_instructions": %s, "hlo_fusions": %s, "hlo_library_gemms": %s' \
    "$(grep -c ' = ' "$f")" "$(grep -c ' fusion(' "$f")" "$(grep -c 'custom_call_target="__cublas' "$f")"
}

stage_peer() {
  local name=peer_torch
  if [ ! -f "$here/peer/AFINs/src/afin/train.py" ]; then
    stage_begin "$name"
    st_status=skipped st_reason="skipped: no peer folder (deploy/gpu/peer/AFINs; fill it with deploy/gpu/fetch_peer.sh)"
    stage_record "$name"
    return
  fi
  mem_start
  stage_run "$name" "$PEER_TIMEOUT" "$here/peer.sh" "${peer_args[@]}"
  mem_stop
  if [ "$st_rc" = 2 ] && grep -q 'no Python with torch' "$logs/$name.err"; then
    st_status=skipped st_reason="skipped: no Python with torch"
  fi
  S[peer]=$(jget "$logs/$name.out" tasks_per_s)
  S[peer_after]=$(jget "$logs/$name.out" tasks_per_s_after_first)
  S[peer_process]=$(calc "$(jget "$logs/$name.out" tasks) / $st_wall")
  stage_record "$name" "\"tasks_per_s_process\": $(jnum "${S[peer_process]}"), $(mem_fields)"
}

stage_infer() {
  local name=infer_$1 limit=$2 tasks=$3
  [ "$1" = gomlx ] && mem_start
  stage_run "$name" "$limit" env AFIN_ENGINE="$1" "$AFIN_BIN" checkpoint throughput "${infer_args[@]}" --tasks "$tasks" --json
  mem_stop
  if [ "$1" = gomlx ]; then
    S[inf_gpu]=$(jget "$logs/$name.out" tasks_per_s)
    S[inf_gpu_after]=$(jget "$logs/$name.out" tasks_per_s_after_first)
    stage_record "$name" "$(mem_fields)"
  else
    S[inf_native]=$(jget "$logs/$name.out" tasks_per_s)
    stage_record "$name"
  fi
}

stage_suite() {
  local name=suite_$1 res=$work/suite-$1 before after units secs progs
  before=$(find "$AFIN_CACHE_DIR" -type f 2>/dev/null | wc -l)
  stage_run "$name" "$SUITE_TIMEOUT" env AFIN_ENGINE="$1" "$AFIN_BIN" bench --suite synthetic --profile "$suite_profile" \
    --methods afin --checkpoint checkpoints/small-full --results "$res" --json
  after=$(find "$AFIN_CACHE_DIR" -type f 2>/dev/null | wc -l)
  units=$(cat "$res"/*.jsonl 2>/dev/null | grep -c '"method":"afin"')
  # The units' own seconds (records' top-level "seconds"): without the
  # reference posteriors the first suite stage may compute.
  secs=$(cat "$res"/*.jsonl 2>/dev/null | grep -o '"seconds":[0-9.eE+-]*' | awk -F: '{s += $2} END {if (NR) printf "%.6g", s}')
  progs=$(cat "$res"/*.jsonl 2>/dev/null | grep -o '"\(programs\|compiles\)":[0-9]*' | awk -F: '$2 > m {m = $2} END {if (NR) print m}')
  stage_record "$name" "\"engine\": $(jstr "$1"), \"units\": $(jnum "$units"), \"units_seconds\": $(jnum "$secs"), \"programs\": $(jnum "$progs"), \"reference_cache_files_before\": $(jnum "$before"), \"reference_cache_files_after\": $(jnum "$after")"
}

write_json
echo "bench.sh: $device; backend ${GOMLX_BACKEND:-}; budget $budget s; output $out" >&2
for st in "${stages[@]}"; do
  case $st in
    check_small_full) stage_check check_small_full checkpoints/small-full ;;
    check_small_flow) stage_check check_small_flow checkpoints/small-flow ;;
    compile_probe) stage_probe ;;
    train) [ ${#precisions[@]} -gt 0 ] && stage_train "${precisions[0]}" ;;
    peer_torch) stage_peer ;;
    infer_gomlx) stage_infer gomlx "$INFER_TIMEOUT" "$infer_tasks" ;;
    infer_native) stage_infer native "$NATIVE_TIMEOUT" "$native_tasks" ;;
    suite_native) stage_suite native ;;
    suite_gomlx) stage_suite gomlx ;;
    train_more) for p in "${precisions[@]:1}"; do stage_train "$p"; done ;;
  esac
done

# ---- the human summary ------------------------------------------------------

{
  echo "bench.sh: done in $(($(date +%s) - t_start)) s on $device -> $out"
  for f in "$work"/stages/*; do
    [ -f "$f" ] || continue
    printf '%s\n' "$(head -n 1 "$f" | sed -n 's/^"\([^"]*\)": {"status": "\([^"]*\)", "rc": \([^,]*\), "seconds": \([^,]*\),.*/  \1: \2 (exit \3, \4 s)/p')"
  done
  ratio() { local r; r=$(calc "${1:-x} / ${2:-x}"); printf '%s' "${r:-n/a}"; }
  printf '  training tasks/s, compiles included: afin %s, PyTorch %s (ratio %s)\n' \
    "${S[train_wc]:-n/a}" "${S[peer]:-n/a}" "$(ratio "${S[train_wc]:-}" "${S[peer]:-}")"
  printf '  training tasks/s, after compiles: afin %s, PyTorch after its first step %s (ratio %s)\n' \
    "${S[train_after]:-n/a}" "${S[peer_after]:-n/a}" "$(ratio "${S[train_after]:-}" "${S[peer_after]:-}")"
  printf '  inference tasks/s: GoMLX %s (after the first batch %s), native %s (speed-up %s)\n' \
    "${S[inf_gpu]:-n/a}" "${S[inf_gpu_after]:-n/a}" "${S[inf_native]:-n/a}" "$(ratio "${S[inf_gpu_after]:-}" "${S[inf_native]:-}")"
} >&2
exit "$failed"
