#!/bin/bash
# Side-by-side NUTS comparison of afin and Stan (rstan 2.21, Debian
# r-cran-rstan) on the synthetic medium setting (d = 8, N = 64), one task
# per likelihood and seed, same protocol: 4 chains, 1000 warm-up + 1000
# draws, initialised at the prior location, diagonal metric, delta 0.8.
# Manual only (needs R, rstan and a C++ toolchain); never run in CI.
#
# Debian's r-cran-bh ships no include/ directory; rstan needs one:
#   ln -s /usr/include /usr/lib/R/site-library/BH/include
#
# usage: baselines/nuts/stancompare/compare.sh [WORKDIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work"
cd "$root" && go build -o "$work/afin" ./cmd/afin
cd "$work"
cp "$here/model.stan" "$here/run.R" "$here/summarize.py" .
liks="lin_gaussian bernoulli_logit binomial_logit lin_student_t"
for lik in $liks; do for s in 1 2 3; do
  ./afin simulate --prior diag_gaussian --likelihood $lik --d 8 --n 64 --design iid --seed $s > task_${lik}_$s.json
done; done
Rscript run.R | tee stan.log
: > afin.log
for lik in $liks; do for s in 1 2 3; do
  # One OS thread, so the sampler's wall time is its CPU time, like
  # Stan's per-chain elapsed time.
  GOMAXPROCS=1 /usr/bin/time -f "%U %S" -o time.txt ./afin infer --method nuts --task task_${lik}_$s.json \
    --warmup 1000 --draws 1000 --chains 4 --seed $s --json > out.json
  python3 - "$lik" "$s" >> afin.log <<'PY'
import json, sys
r = json.load(open("out.json"))
u, s = map(float, open("time.txt").read().split()[-2:])
cpu, d = u + s, r["diagnostics"]
g, e = d["grad_evals"], d["ess_bulk"]
print(f"AFIN {sys.argv[1]} seed {sys.argv[2]}: cpu {cpu:.3f} s, grads {g}, min bulk ESS {e:.0f}, "
      f"grads/cpu-s {g/cpu:.0f}, ess/cpu-s {e/cpu:.0f}, ess/grad {e/g:.4f}, ess/sampler-s {e/r['seconds']:.0f}, "
      f"div {d['divergences']}, accept {d['accept_rate']:.3f}")
PY
done; done
cat afin.log
python3 summarize.py
