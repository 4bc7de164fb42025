// Package methods is afin's one methods layer: one adapter per inference
// method (exact, nuts, frvi, frvi-snis, afin, afin-snis, afin-imh, auto,
// iaf, maf, nsf) behind the Method interface, with typed options. `afin infer` and
// `afin bench` both run methods through it, so a unit of a benchmark and
// a single `afin infer` run follow the same protocol, draw from the same
// random streams (internal/streams) and report the same seconds and
// diagnostics. `afin infer` is a bench unit with a one-entry ladder.
//
// # Registry
//
// Each method is one file that registers its Descriptor in an init
// function (Register): its identity (name, summary, budget kind, family,
// importance weights, report label, colour and marker: a catalog.Entry,
// see package catalog), its constructor, its slots and its
// `afin infer` flags. New, Names, SlotsOf and Lookup read the registry,
// and so do the CLI, the benchmark, the records and the report: no other
// file lists the methods. The identity sits in its own leaf package
// because records validates method names and methods imports records.
// The catalog also carries the roles the report reads instead of names:
// the reference sampler, the baselines, the workflow and its stages, a
// weighted method's proposal. The four methods that run AFIN's network
// register through registerNetwork, which loads the network, binds
// --checkpoint and reports the checkpoint's hash for them.
// A benchmark suite still chooses which methods it compares (its plans
// name them by the constants the method files export); a method
// registered with AnySuite, like the external exec:NAME methods, joins
// any suite that --methods names it in.
//
// # Budgets
//
// Every method is run along a ladder of budgets and emits one Point per
// budget. The budget vocabulary is the CLI's:
//
//   - draws: draws returned, in total over chains (exact, nuts, afin; for
//     frvi and the flows, Options.VI.Draws draws from the fitted q);
//   - proposals: SNIS proposals (afin-snis, frvi-snis);
//   - steps: optimisation steps per learning rate (frvi, iaf, maf, nsf;
//     Options.FRVISteps behind an frvi-snis proposal);
//   - warm-up iterations and chains are NUTS options, not budgets.
//
// # Timing rule: what Point.Seconds includes
//
//   - exact: the closed-form posterior plus drawing from it.
//   - afin: one forward pass of the network plus sampling (a flow
//     decoder's forward pass and sampling are one pass). GoMLX compiles
//     its block programs once per input shape: the first task of each
//     shape gets an untimed warm-up pass, so compilation is never charged.
//   - afin-snis: the afin cost plus log q, the target evaluations log p̃
//     and the self-normalised weights. The proposal star (the largest
//     point's proposals, unweighted): forward plus sampling.
//   - afin-imh: one AFIN pass of all chains' proposals (forward plus
//     sampling) plus the target evaluations and the accept/reject loop.
//   - auto: the AFIN pass and SNIS; when NUTS answers, plus every NUTS
//     attempt's warm-up and sampling.
//   - nuts: warm-up plus sampling of all chains (nuts.Result.Seconds);
//     convergence diagnostics are computed after the clock stops.
//   - frvi, iaf, maf, nsf: the protocol's start (under the practitioner
//     protocol the Laplace approximation: mode by BFGS, Hessian; shared by
//     every rate, so charged once), the selected learning rate's
//     optimisation up to the budget, and drawing from q. Rates that lost
//     the selection and the scoring itself are not charged (their total
//     is reported as sweep_seconds), nor are the convergence checks
//     (vi.FRVIResult.CheckSeconds, flows.Result.CheckSeconds: they
//     diagnose the fit, they do not produce it; reported as
//     check_seconds).
//   - frvi-snis: the frvi cost of its proposal (start plus the selected
//     rate's optimisation) plus proposals, log q, target evaluations and
//     weights; the convergence checks are not charged.
//
// Loading a checkpoint, building the task and the reference are never
// charged.
//
// # Protocols
//
//   - NUTS chains start at the prior location (the authors' choice;
//     Options.NUTS.InitJitter adds U(−j, j) per coordinate), diagonal
//     metric unless Dense, tree depth MaxDepth; each ladder point is an
//     independent run with its own seed (streams.NUTSLadderSeed).
//   - VI protocol (FRVI and flows; Options.VI.Protocol, `--protocol`):
//     practitioner (the default) starts at the Laplace approximation and
//     optimises in its whitened coordinates with log-scale diagonals, so
//     a learning rate is a fraction of a posterior sd per step (sweep
//     vi.PractitionerLRs); paper is the paper's protocol, the prior's
//     Gaussian moments in z's own units and its 7 rates 10⁻⁶..10⁻²
//     (vi.PaperLRs). Points record which (diagnostics "protocol",
//     method_settings "protocol").
//   - Learning rates: every rate of Options.VI.LRs (nil: the protocol's
//     sweep) is fitted as one trajectory snapshotted at each budget of
//     the ladder (a snapshot is exactly a run of that many steps: Adam
//     and the trailing average depend only on the steps taken); the kept
//     rate per budget is the one with the lowest score: SW2 to the
//     reference (vi.SelectOracle, the paper's "best result at each
//     budget", which needs Job.Score) or −ELBO (vi.SelectELBO, usable
//     without ground truth, the default of `afin infer`). With
//     Job.ScoreBound (bench gives SW2's moment bound) the oracle scores
//     only the fits whose bound does not exceed the best score found
//     (vi.SweepBounded): the choice is the exhaustive one, and the chosen
//     fit's score, which is SW2 of the very draws its point reports, is
//     handed on (Point.Scored) rather than computed again. frvi-snis
//     chooses its proposal's rate as frvi does, on Options.VI.Draws draws
//     of each fit, so its proposal is frvi's fit at that step count; its
//     star then draws as many as the largest proposal budget.
//   - Convergence: each kept fit is checked (vi.Assess: rate at the edge
//     of the sweep, ELBO still rising over the last fifth of the steps,
//     mean gradient above its noise, defensive importance check of the
//     moments). The verdict is Diagnostics.Flags ("converged",
//     "convergence_reason") on frvi, iaf, maf, nsf and the frvi-snis
//     proposal; the checks' numbers are in VIDiagnostics.
//   - AFIN supports both decoders: Gaussian (closed-form moments) and flow.
//     Every AFIN answer measures its own fit against the task's posterior
//     (FitDiagnostics: fit_pareto_k, fit_ess): the defensive importance
//     weights of fresh draws of q, seeded from the answer (fitRNG) so the
//     verdict is the same at every seed, the check FRVI's fits pass; and
//     compares its mean and sds with the moments those weights give
//     (fit_mean_shift, fit_wide_log, fit_narrow_log; the rule in
//     momentFlags), which sees an answer too wide for k̂ to notice. A
//     statistic within its Monte Carlo error of its threshold raises
//     near_threshold (nearThreshold).
//   - Flags: Point.Settle raises the flags a point's numbers imply
//     (poor_fit, too_wide, too_narrow, shifted, near_threshold,
//     degenerate — an SNIS answer below MinSNISESS effective draws among
//     them — sampler)
//     beside the method's own (convergence, training support) and writes
//     Flags.Warnings; Run settles every point a method emits, and the
//     runners call methods through it, which also raises no_likelihood on
//     a task without factors. auto returns its SNIS answer only with no
//     flag raised.
//
// # Errors
//
// Errors wrap ErrBadInput (options or budgets a user gave wrong),
// ErrNotConjugate (exact on a non-conjugate task) or ErrUnavailable (a
// method that cannot run here, e.g. no checkpoint), so callers pick exit
// codes and skips with errors.Is.
package methods
