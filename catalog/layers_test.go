package catalog

import (
	"os/exec"
	"strings"
	"testing"
)

// The catalog exists so that the packages that only read records need
// none of the methods' code: records imports nothing under methods, and
// reports (with everything it imports) links no GoMLX package.
func TestLayers(t *testing.T) {
	list := func(args ...string) []string {
		out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
		if err != nil {
			t.Fatalf("go list %v: %v", args, err)
		}
		return strings.Fields(string(out))
	}
	for _, p := range list("-f", `{{join .Imports " "}}`, "../records") {
		if strings.Contains(p, "/afin/methods") {
			t.Errorf("records imports %s", p)
		}
	}
	for _, p := range list("-deps", "../reports") {
		if strings.Contains(p, "gomlx") || strings.Contains(p, "/afin/methods") {
			t.Errorf("reports depends on %s", p)
		}
	}
}
