package records

import (
	"encoding/json"
	"math"
	"strings"
	"unicode/utf8"
)

// MaxErrorBytes bounds a failed record's error text. External methods
// already keep only their output's tail; this cap guards the store
// against any other error that carries a whole log, keeping the head
// (which names the unit and the cause) and the tail (the last lines a
// crashing program printed).
const MaxErrorBytes = 4000

// plainRecord has Record's fields without its MarshalJSON.
type plainRecord Record

// failedJSON writes a failed record without metrics: the outer nil
// fields are shallower than the embedded ones of the same JSON name, so
// they hide them and omitempty drops them.
type failedJSON struct {
	*plainRecord
	M1  *Num `json:"m1,omitempty"`
	M2  *Num `json:"m2,omitempty"`
	SW2 *Num `json:"sw2,omitempty"`
}

// MarshalJSON writes a scored record as is and a failed one without m1,
// m2 and sw2: on disk a failure has no metrics at all, so no reader can
// mistake it for a scored point.
func (r Record) MarshalJSON() ([]byte, error) {
	p := plainRecord(r)
	if !r.Failed() {
		return json.Marshal(&p)
	}
	return json.Marshal(failedJSON{plainRecord: &p})
}

// MarkFailed turns r into the failed record of its key: the reason
// (trimmed to MaxErrorBytes) and NaN metrics, so code that forgets to
// check Failed excludes the point instead of averaging a 0.
func (r *Record) MarkFailed(reason string) {
	if reason = strings.TrimSpace(reason); reason == "" {
		reason = "failed (no reason given)"
	}
	r.Error = TruncateError(reason, MaxErrorBytes)
	nan := Num(math.NaN())
	r.M1, r.M2, r.SW2 = nan, nan, nan
	r.Diagnostics = nil
}

// TruncateError shortens s to at most max bytes (on rune boundaries),
// keeping a quarter from its head and the rest from its tail around a
// marker.
func TruncateError(s string, max int) string {
	const mark = " […] "
	if len(s) <= max || max <= len(mark) {
		return s
	}
	keep := max - len(mark)
	head := keep / 4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tail := len(s) - (keep - head)
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + mark + s[tail:]
}
