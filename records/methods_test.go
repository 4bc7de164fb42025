package records_test

// The records' method names are those of the method catalogue, which the
// methods package fills in as it is linked; these tests read records of
// the built-in methods.
import _ "github.com/afin-bench/afin/methods"
