#!/usr/bin/env bash
# Side-by-side NUTS benchmark: afin's Go NUTS versus Stan (rstan 2.21) on the
# synthetic medium setting (diag_gaussian prior, d = 8, N = 64, iid design)
# for the four likelihoods of the synthetic suite. Both run single-core
# (taskset -c $CORE; GOMAXPROCS=1 for afin, chains one after another for
# Stan) with the same warm-up, draws and chains, and both are timed in CPU
# seconds. See README.md. Not part of CI.
#
# Environment (defaults in brackets): WARMUP [1000], DRAWS [5000], CHAINS [4],
# REPS [3] sampler seeds per task, TASK_SEED [1], SEED [1] first sampler seed,
# CORE [0], LIKELIHOODS ["lin_gaussian bernoulli_logit binomial_logit
# lin_student_t"], WORK [a new temporary directory].
set -euo pipefail

WARMUP=${WARMUP:-1000}
DRAWS=${DRAWS:-5000}
CHAINS=${CHAINS:-4}
REPS=${REPS:-3}
TASK_SEED=${TASK_SEED:-1}
SEED=${SEED:-1}
CORE=${CORE:-0}
LIKELIHOODS=${LIKELIHOODS:-"lin_gaussian bernoulli_logit binomial_logit lin_student_t"}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
WORK=${WORK:-$(mktemp -d -t afin-stancompare.XXXXXX)}
mkdir -p "$WORK/tasks"

for tool in jq Rscript /usr/bin/time go; do
	command -v "$tool" >/dev/null || { echo "run.sh: $tool not found (see README.md)" >&2; exit 1; }
done
pin=()
if command -v taskset >/dev/null; then pin=(taskset -c "$CORE"); fi

export GOMLX_BACKEND=go
(cd "$root" && go build -o "$WORK/afin" ./cmd/afin && go build -o "$WORK/nutscpu" ./tools/stancompare/nutscpu)

echo "# warmup=$WARMUP draws=$DRAWS chains=$CHAINS reps=$REPS task_seed=$TASK_SEED seed=$SEED core=$CORE work=$WORK" >&2
afin_clock="n/a"
results="$WORK/results.tsv"
: >"$results"
for lik in $LIKELIHOODS; do
	task="$WORK/tasks/$lik.json"
	"$WORK/afin" simulate --prior diag_gaussian --likelihood "$lik" --d 8 --n 64 --design iid --seed "$TASK_SEED" >"$task"

	for ((r = 0; r < REPS; r++)); do
		s=$((SEED + r))
		# CPU seconds of the whole process (start-up, task parsing and the
		# ESS/R-hat computation included: a conservative count for afin).
		GOMAXPROCS=1 "${pin[@]}" /usr/bin/time -o "$WORK/time.txt" -f '%U %S' \
			"$WORK/afin" infer --method nuts --task "$task" --seed "$s" \
			--warmup "$WARMUP" --draws "$((DRAWS * CHAINS))" --chains "$CHAINS" --json >"$WORK/afin-$lik-$s.json"
		cpu=$(awk '{print $1 + $2}' "$WORK/time.txt")
		# Prefer the sampler's own CPU count (warm-up plus sampling, like
		# Stan's clock()) should `afin infer` report one.
		own=$(jq -r '.diagnostics.cpu_seconds // empty' "$WORK/afin-$lik-$s.json")
		if [[ -n $own ]]; then cpu=$own; afin_clock="diagnostics.cpu_seconds"; else afin_clock="process user+sys (incl. start-up and ESS/R-hat)"; fi
		jq -r --arg lik "$lik" --arg cpu "$cpu" \
			'[$lik, "afin-cli", .diagnostics.grad_evals, ($cpu|tonumber), .seconds, .diagnostics.ess_bulk, .diagnostics.rhat, .diagnostics.divergences] | @tsv' \
			"$WORK/afin-$lik-$s.json" >>"$results"
		# The same sampler run (same nuts.Config and seed, hence the same
		# draws), timed over warm-up plus sampling only, as Stan's clock().
		GOMAXPROCS=1 "${pin[@]}" "$WORK/nutscpu" --task "$task" --seed "$s" \
			--warmup "$WARMUP" --draws "$DRAWS" --chains "$CHAINS" >"$WORK/nutscpu-$lik-$s.json"
		jq -r --arg lik "$lik" \
			'[$lik, "afin", .grad_evals, .cpu_seconds, .wall_seconds, .ess_bulk, .rhat, .divergences] | @tsv' \
			"$WORK/nutscpu-$lik-$s.json" >>"$results"
	done

	# Stan: one R process per task, REPS seeds; stan_seconds is Stan's own
	# clock() (CPU) over warm-up plus sampling of all chains.
	"${pin[@]}" Rscript "$here/stan_nuts.R" --warmup "$WARMUP" --draws "$DRAWS" --chains "$CHAINS" \
		--seed "$SEED" --reps "$REPS" "$task" >"$WORK/stan-$lik.jsonl"
	jq -r --arg lik "$lik" \
		'[$lik, "stan", .grad_evals, .stan_seconds, .r_cpu_seconds, .ess_bulk, .rhat, .divergences] | @tsv' \
		"$WORK/stan-$lik.jsonl" >>"$results"

	# Cross-check of the ESS estimators: R's posterior::ess_bulk on afin's
	# draws of the first seed (an extra run, untimed).
	GOMAXPROCS=1 "$WORK/afin" infer --method nuts --task "$task" --seed "$SEED" \
		--warmup "$WARMUP" --draws "$((DRAWS * CHAINS))" --chains "$CHAINS" --draws-out "$WORK/afin-$lik.csv" >/dev/null
	Rscript "$here/stan_nuts.R" --ess-csv "$WORK/afin-$lik.csv" --chains "$CHAINS" >"$WORK/afin-$lik-ess-r.json"
	echo "$lik: ESS bulk of afin seed $SEED draws: afin $(jq .diagnostics.ess_bulk "$WORK/afin-$lik-$SEED.json"), R posterior $(jq .ess_bulk "$WORK/afin-$lik-ess-r.json")" >&2
done

# Table: per likelihood and sampler, sums over seeds (ESS/s = ΣESS / ΣCPU-s,
# ESS/grad = ΣESS / Σgrads), then afin/Stan ratios.
awk -F'\t' '
{
	k = $1 SUBSEP $2
	g[k] += $3; cpu[k] += $4; ess[k] += $6; n[k]++
	if ($7 > rh[k]) rh[k] = $7
	dv[k] += $8
	if (!($1 in seen)) { seen[$1] = 1; order[++m] = $1 }
}
END {
	who[1] = "afin"; who[2] = "afin-cli"; who[3] = "stan"
	printf "%-16s %-14s %12s %10s %12s %10s %10s %8s %6s\n", "likelihood", "who", "grads/cpu-s", "ESS(mean)", "ESS/cpu-s", "ESS/grad", "cpu-s", "maxRhat", "div"
	for (i = 1; i <= m; i++) {
		l = order[i]
		for (j = 1; j <= 3; j++) {
			w = who[j]; k = l SUBSEP w
			if (!(k in n)) continue
			printf "%-16s %-14s %12.0f %10.0f %12.0f %10.4f %10.3f %8.4f %6d\n", l, w, g[k]/cpu[k], ess[k]/n[k], ess[k]/cpu[k], ess[k]/g[k], cpu[k]/n[k], rh[k], dv[k]
		}
		s = l SUBSEP "stan"
		for (j = 1; j <= 2; j++) {
			a = l SUBSEP who[j]
			if ((a in n) && (s in n))
				printf "%-16s %-14s %12.2f %10s %12.2f %10.3f\n", l, who[j] "/stan", (g[a]/cpu[a])/(g[s]/cpu[s]), "", (ess[a]/cpu[a])/(ess[s]/cpu[s]), (ess[a]/g[a])/(ess[s]/g[s])
		}
	}
}' "$results"
echo "# CPU seconds, single core: afin = warm-up + sampling (nutscpu); afin-cli = afin infer, $afin_clock; stan = Stan's clock() over warm-up + sampling" >&2
echo "# raw rows (likelihood, who, grad_evals, cpu_s, other_s, ess_bulk, rhat, divergences): $results" >&2
