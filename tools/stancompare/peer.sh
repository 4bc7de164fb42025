#!/usr/bin/env bash
# Stan as a peer through afin's external-method protocol: for each
# likelihood of the synthetic medium tier (diag_gaussian prior, d = 8,
# N = 64) run `afin infer --method nuts` and `afin infer --method
# exec:stan` (methods.json: rstan via stan_nuts.R --exec) on the same task
# with the same warm-up, chains and draws, and print ESS per gradient and
# ESS per CPU-second for both. Seconds are each sampler's own CPU clock
# over warm-up plus sampling of all chains on one core (afin:
# diagnostics.cpu_seconds under GOMAXPROCS=1; Stan: its clock(), chains one
# after another). tools/stancompare/run.sh is the more careful comparison
# (pinned core, several seeds); this one shows the exec:stan path. Not in CI.
#
# Environment: AFIN [go run ./cmd/afin], DRAWS [4000, total over 4 chains],
# TASK_SEED [1], SEED [1], LIKELIHOODS [the four of the synthetic suite].
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
AFIN=${AFIN:-}
if [ -z "$AFIN" ]; then
	AFIN=$(mktemp -d)/afin
	(cd "$here/../.." && go build -o "$AFIN" ./cmd/afin)
fi
DRAWS=${DRAWS:-4000}
TASK_SEED=${TASK_SEED:-1}
SEED=${SEED:-1}
LIKELIHOODS=${LIKELIHOODS:-"lin_gaussian bernoulli_logit binomial_logit lin_student_t"}
work=$(mktemp -d)
printf '%-16s %-6s %8s %9s %8s %10s %11s %8s\n' likelihood who cpu-s grads ess_bulk ESS/grad ESS/cpu-s rhat
for lik in $LIKELIHOODS; do
	"$AFIN" simulate --prior diag_gaussian --likelihood "$lik" --d 8 --n 64 --seed "$TASK_SEED" >"$work/$lik.json"
	GOMAXPROCS=1 "$AFIN" infer --method nuts --task "$work/$lik.json" --seed "$SEED" --warmup 1000 --chains 4 --draws "$DRAWS" --json >"$work/nuts.json"
	"$AFIN" infer --method exec:stan --methods-file "$here/methods.json" --task "$work/$lik.json" --seed "$SEED" --draws "$DRAWS" --json >"$work/stan.json"
	jq -r --arg l "$lik" '[$l, "afin", .diagnostics.cpu_seconds, .diagnostics.grad_evals, .diagnostics.ess_bulk, .diagnostics.rhat] | @tsv' "$work/nuts.json"
	jq -r --arg l "$lik" '[$l, "stan", .seconds, .diagnostics.reported.grad_evals, .diagnostics.reported.ess_bulk, .diagnostics.reported.rhat] | @tsv' "$work/stan.json"
done | awk -F'\t' '{ printf "%-16s %-6s %8.3f %9d %8.0f %10.4f %11.0f %8.4f\n", $1, $2, $3, $4, $5, $5/$4, $5/$3, $6 }'
