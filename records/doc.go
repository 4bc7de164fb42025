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
// It is a leaf on purpose: bench writes records and reports reads them,
// and reading a results directory must not compile the network or the
// samplers. The JSON schema is the one written since the first release;
// testdata/smoke-v0.jsonl holds records from before this package existed
// and must keep loading.
package records
