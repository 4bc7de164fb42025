// Package bench runs afin's benchmark suites: it enumerates the units of a
// suite (setting × seed × method), builds every setting's task from the
// seeded simulator (or a UCI dataset), runs each method along its budget
// ladder, scores every budget point against a cached reference posterior
// (M1, M2, SW2, wall-clock seconds, method diagnostics) and appends one JSON
// line per point to a results store, each record with the unit's CPU
// seconds (cpu.go).
//
// The store is crash-safe and shareable: one write (plus fsync) per record,
// a torn last line is dropped on restart, finished points are never redone,
// and --shard I/N gives each unit to exactly one of N processes, balancing
// their estimated cost (shard.go; the cost model of cost.go, fitted by
// tools/costfit to measured runs, which `afin bench --estimate` prints), so
// a Slurm array or a Kubernetes Indexed Job can split a suite over one
// results directory (see deploy/). Progress is weighted by the same
// estimates, as a bar on a terminal and log lines elsewhere (progress.go).
//
// Each suite is one file (suite_*.go) implementing Suite: its own flags,
// settings, seeds, families, method plans and budgets per profile, its
// tasks, its reference policy and its scoring (against a reference
// posterior; by the ranks of a known truth for calibration; by held-out
// predictions for openml). Every suite runs through the one run session
// (session.go): store and lock, provenance, method resolution, progress,
// and the interrupted / first-error summary live there alone. Register
// puts a suite in the registry of package suite, which records and
// reports read too; Run and `afin bench` name no suite.
//
// The methods themselves live in package methods, which `afin infer` uses
// too, so a unit here and an `afin infer` run are the same computation
// (UnitSeed gives the seed that reproduces a unit). Records, their store
// and the directory reader live in package results, which reports reads
// without compiling any method. Every budget ladder and method option of
// every profile shared by several suites lives in profiles.go (a suite's
// own per-profile budgets, as extrapolation's, calibration's and openml's,
// in its file); reference settings are
// presets of package reference.
package bench
