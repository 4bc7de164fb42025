package reports

import "github.com/afin-bench/afin/catalog"

// The report's role-specific tables (workflow, trust, OpenML gaps) find
// their methods by the roles the catalog gives them, never by name, so a
// renamed or added method needs no edit here.

// workflow is the first registered workflow method and its stages; ok is
// false when the binary links none.
func workflow() (name string, w catalog.Workflow, ok bool) {
	for _, e := range catalog.Workflows() {
		return e.Name, *e.Workflow, true
	}
	return "", catalog.Workflow{}, false
}

// referenceName is the reference sampler's name ("" when none is
// registered).
func referenceName() string {
	e, _ := catalog.Reference()
	return e.Name
}
