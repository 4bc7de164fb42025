#!/bin/sh
# A complete external method for `afin --method exec:exact-via-cli`: it
# reads the task afin wrote ($AFIN_TASK), draws $AFIN_BUDGET draws from the
# exact posterior (conjugate tasks only) with afin's own CLI as the engine,
# writes them to $AFIN_DRAWS_OUT and reports its own seconds and one
# diagnostic in $AFIN_DIAGNOSTICS_OUT. Replace the afin line with your
# sampler; anything it prints to stderr shows up in a failed unit's reason.
set -eu
start=$(date +%s.%N)
"${AFIN:-afin}" infer --method exact --task "$AFIN_TASK" --draws "$AFIN_BUDGET" \
  --seed "$AFIN_SEED" --draws-out "$AFIN_DRAWS_OUT" >/dev/null
end=$(date +%s.%N)
awk -v a="$start" -v b="$end" -v n="$AFIN_BUDGET" \
  'BEGIN { printf "{\"seconds\": %.6f, \"diagnostics\": {\"my_draws\": %d}}\n", b - a, n }' >"$AFIN_DIAGNOSTICS_OUT"
