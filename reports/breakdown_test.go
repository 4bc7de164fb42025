package reports

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// Row 9 of issue 40: the caption's warning breakdown names every flag
// kind, shifted and too wide among them, and its counts add up to the
// total it states; a kind it does not know is named too.
func TestWarningBreakdownAddsUp(t *testing.T) {
	recs := snisRuns(0.2, 0.3, 0.4, 0.5, 0.6, 0.2)
	recs[0].Flags = map[string]string{"shifted": "0.56 sd", "too_wide": "1.6×"}
	recs[1].Flags = map[string]string{"too_wide": "1.5×"}
	recs[2].Flags = map[string]string{"not_converged": "ELBO", "poor_fit": "k̂ 0.9"}
	recs[3].Flags = map[string]string{"degenerate": "ESS 3"}
	recs[4].Flags = map[string]string{"some_later_kind": "why"}
	caption := headlineTable(recs).Caption
	m := regexp.MustCompile(`Runs with a warning: (\d+), carrying (\d+) flags \(([^;]*);`).FindStringSubmatch(caption)
	if m == nil {
		t.Fatalf("caption %q lacks the breakdown", caption)
	}
	if m[1] != "5" || m[2] != "7" {
		t.Errorf("caption says %s runs, %s flags; want 5 and 7", m[1], m[2])
	}
	sum := 0
	named := map[string]bool{}
	for _, part := range strings.Split(m[3], ", ") {
		n, words, ok := strings.Cut(part, " ")
		v, err := strconv.Atoi(n)
		if !ok || err != nil {
			t.Fatalf("part %q of %q is not a count and a kind", part, m[3])
		}
		sum += v
		named[words] = true
	}
	if fmt.Sprint(sum) != m[2] {
		t.Errorf("the parts sum to %d, the caption says %s: %q", sum, m[2], caption)
	}
	for _, k := range append(records.FlagKinds(), records.FlagKind{Words: "some later kind"}) {
		if !named[k.Words] {
			t.Errorf("breakdown %q does not name %q", m[3], k.Words)
		}
	}
}
