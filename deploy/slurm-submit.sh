#!/bin/bash
# Submit deploy/slurm-bench.sh as a job array whose size and --time come
# from the cost model: `afin bench --estimate` says how long the largest of
# N shards takes (its estimated CPU time, times a 1.5 margin for the
# model's error and a busy node), and that is the array's time limit.
#
#   SUITE=snis PROFILE=paper SHARDS=32 deploy/slurm-submit.sh
# or, the fewest shards whose largest fits a limit:
#   SUITE=snis PROFILE=paper TIME_LIMIT=4h deploy/slurm-submit.sh
#
# RESULTS, AFIN_CACHE_DIR and GOMLX_BACKEND pass on to the array as
# slurm-bench.sh reads them. Extra arguments go to sbatch (e.g. -p PART).
set -euo pipefail

SUITE="${SUITE:-synthetic}"
PROFILE="${PROFILE:-paper}"
AFIN="${AFIN:-$PWD/bin/afin}"
export SUITE PROFILE AFIN

if [ -n "${TIME_LIMIT:-}" ]; then
	est="$("$AFIN" bench --estimate --estimate-json --suite "$SUITE" --profile "$PROFILE" --time-limit "$TIME_LIMIT")"
else
	est="$("$AFIN" bench --estimate --estimate-json --suite "$SUITE" --profile "$PROFILE" --shards "${SHARDS:-16}")"
fi
N="$(printf '%s' "$est" | sed -n 's/.*"shards":\([0-9]*\).*/\1/p')"
T="$(printf '%s' "$est" | sed -n 's/.*"slurm_time":"\([0-9:-]*\)".*/\1/p')"
: "${N:?could not read the shard count from: $est}"
: "${T:?could not read the time limit from: $est}"
echo "afin bench --estimate: $SUITE/$PROFILE on $N shards, --time=$T" >&2
exec sbatch --array="0-$((N - 1))" --time="$T" "$@" "$(dirname "$0")/slurm-bench.sh"
