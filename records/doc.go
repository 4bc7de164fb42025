// Package results is the benchmark's results store: the record written
// for each (suite, setting, seed, method, variant, budget) point, the
// append-only JSON-lines file it lives in (one write per record, a torn
// last line dropped on reopen, so a killed run resumes) and the reader
// that merges every results file of a directory.
//
// It is a leaf on purpose: bench writes records and reports reads them,
// and reading a results directory must not compile the network or the
// samplers. The JSON schema is the one written since the first release;
// testdata/smoke-v0.jsonl holds records from before this package existed
// and must keep loading.
package records
