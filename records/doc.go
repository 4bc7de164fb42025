// Package records is the benchmark's results store: the record written
// for each (suite, setting, seed, method, variant, budget) point, the
// append-only JSON-lines file it lives in (one write per record) and the
// reader that merges every results file of a directory.
//
// The reader refuses what is not a record (Validate: required fields,
// known suite and method, metrics ≥ 0) and counts what it repairs or
// mixes (torn fragments, a missing final newline, duplicates, several
// profiles or commits) in warnings; two different results for one key are
// a conflict the caller must refuse. A unit that failed leaves a failed
// record per point (an "error" field, no metrics); a later success of
// the same key supersedes it; a key stored twice with the same metrics
// and different timings (a unit run twice) is a duplicate, kept once. A
// results directory has one writer, or the shards of one plan (same
// suite, profile and shard count), each writing its own file side by
// side (lock.go); a writer, on resume, cuts torn fragments out of its
// file wherever they sit.
//
// A record keeps the flags its point raised (flags: name → why, e.g.
// not_converged, outside_support, poor_fit, degenerate, sampler) and the
// same as warnings in words; records written before those fields carry
// only not_converged and outside_support, which readers still honour.
// Non-finite numbers (Num) are the JSON strings "NaN", "Inf" and "-Inf";
// null, which records written before these tokens hold for every
// non-finite value, reads as NaN (missing). A metric (m1, m2, sw2) is
// finite or NaN: one that overflowed is stored as NaN (Metric).
//
// Two rules report, check and bench share live here too. Bounds
// (bounds.go): a metric beyond 10⁶ times its scale (the prior's m1, else
// its setting's median) or beyond 10¹² is implausible, named by file:line
// (Loaded.Where) and left out of means (ExcludeImplausible). Plans
// (plan.go): bench writes every unit of a run, all shards included,
// beside the results (WritePlan), and Loaded.Incomplete says
// "incomplete: X of Y units" of a directory missing records or shards.
//
// It is a leaf on purpose (it reads only the suite registry, package
// suite, itself a leaf): bench writes records and reports reads them,
// and reading a results directory must not compile the network or the
// samplers. The JSON schema is the one written since the first release;
// testdata/smoke-v0.jsonl holds records from before this package existed
// and must keep loading.
package records
