// Package methods is afin's one methods layer: one adapter per inference
// method (exact, nuts, frvi, frvi-snis, afin, afin-snis, afin-imh, auto,
// iaf, maf, nsf) behind the Method interface, with typed options. `afin infer` and
// `afin bench` both run methods through it, so a unit of a benchmark and
// a single `afin infer` run follow the same protocol, draw from the same
// random streams (internal/streams) and report the same seconds and
// diagnostics. `afin infer` is a bench unit with a one-entry ladder.
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
//     decoder's forward pass and sampling are one graph). GoMLX compiles
//     one program per input shape: the first task of each shape gets an
//     untimed warm-up pass, so compilation is never charged.
//   - afin-snis: the afin cost plus log q, the target evaluations log p̃
//     and the self-normalised weights. The proposal star: forward plus
//     sampling.
//   - afin-imh: one AFIN pass of all chains' proposals (forward plus
//     sampling) plus the target evaluations and the accept/reject loop.
//   - auto: the AFIN pass and SNIS; when NUTS answers, plus every NUTS
//     attempt's warm-up and sampling.
//   - nuts: warm-up plus sampling of all chains (nuts.Result.Seconds);
//     convergence diagnostics are computed after the clock stops.
//   - frvi, iaf, maf, nsf: the optimisation of the selected learning rate
//     up to the budget plus drawing from q. Rates that lost the selection
//     and the scoring itself are not charged (their total is reported as
//     sweep_seconds).
//   - frvi-snis: the selected rate's FRVI optimisation plus proposals, log
//     q, target evaluations and weights.
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
//   - Learning rates (FRVI and flows): every rate of Options.VI.LRs is
//     fitted, independently per budget for FRVI (so a point is exactly a
//     run of that many steps) and as one snapshotting trajectory for the
//     flows; the kept rate per budget is the one with the lowest score:
//     SW2 to the reference (vi.SelectOracle, the paper's "best result at
//     each budget", which needs Job.Score) or −ELBO (vi.SelectELBO, usable
//     without ground truth, the default of `afin infer`).
//   - AFIN supports both decoders: Gaussian (closed-form moments) and flow.
//
// # Errors
//
// Errors wrap ErrBadInput (options or budgets a user gave wrong),
// ErrNotConjugate (exact on a non-conjugate task) or ErrUnavailable (a
// method that cannot run here, e.g. no checkpoint), so callers pick exit
// codes and skips with errors.Is.
package methods
