#!/bin/bash
# Run one afin benchmark suite as a Slurm job array: array task I of N runs
# `afin bench --shard I/N`, every task appending to its own file in one
# shared results directory. Resubmitting the same array resumes: finished
# records are never redone. Merge and plot afterwards with
#   afin report --results "$RESULTS" --out report
#
# Submit with deploy/slurm-submit.sh, which sizes the array and sets
# --time from `afin bench --estimate` (the largest shard's estimated CPU
# time × 1.5):
#   SUITE=snis PROFILE=paper SHARDS=32 RESULTS=/shared/afin/results deploy/slurm-submit.sh
# or directly (N = number of array tasks, here 16), when the --time below,
#   afin bench --estimate --suite synthetic --profile paper --shards 16
# for the defaults, fits (go test ./deploy/ checks it against the estimate):
#   sbatch --array=0-15 deploy/slurm-bench.sh
#
#SBATCH --job-name=afin-bench
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=0-00:10:00
#SBATCH --output=afin-bench-%A_%a.log

set -euo pipefail

SUITE="${SUITE:-synthetic}"
PROFILE="${PROFILE:-paper}"
RESULTS="${RESULTS:-$PWD/results}"          # must be on a shared file system
AFIN="${AFIN:-$PWD/bin/afin}"                # built with: go tool task build (carries its commit)
# One reference cache for all tasks of the array, so each long NUTS
# reference is computed once per task content.
export AFIN_CACHE_DIR="${AFIN_CACHE_DIR:-$RESULTS/.reference-cache}"
# The pure Go backend needs nothing installed; on GPU nodes point this at
# the PJRT CUDA plugin instead (see README).
export GOMLX_BACKEND="${GOMLX_BACKEND:-go}"

: "${SLURM_ARRAY_TASK_ID:?run this script as a job array (sbatch --array=0-N)}"
# The shard count is the array size, whatever the array's index range.
N="${SLURM_ARRAY_TASK_COUNT:?}"
I="$(( SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0} ))"

mkdir -p "$RESULTS"
exec "$AFIN" bench --suite "$SUITE" --profile "$PROFILE" --results "$RESULTS" --shard "$I/$N"
