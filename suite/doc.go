// Package suite is the registry of afin's benchmark suites: one entry per
// suite, holding its identity (its name) and the policies that the
// packages reading its records need without running it: how its records
// are scored (against a reference posterior, by calibration ranks, or by
// held-out predictions) and which environment variable names its raw
// data's directory when the command line does not.
//
// The registry is a leaf so that every layer can read it without an
// import cycle (records ← methods ← bench; reports reads records):
//
//   - package bench holds how a suite runs (bench.Suite: its settings,
//     its method plans per profile, its tasks, its reference policy, a
//     runner of its own where it needs one) and registers each suite here
//     with bench.Register; the registered value is that bench.Suite, so
//     there is one registry, read here by name and by bench for behaviour;
//   - package records refuses a record whose suite is not registered;
//   - package reports scores and gates records by their suite's Scoring
//     and draws a suite's section with the builder it keys by the suite's
//     name (reports cannot import bench, which runs methods); a suite
//     without one gets the generic section.
//
// The built-in suites' entries are declared in builtin.go, so that
// records and reports know them in binaries and tests that do not link
// bench; bench.Register attaches each one's behaviour to its entry. A new
// suite needs no entry there: its bench file's registration is its entry.
package suite
