package reports

import (
	"strings"
	"testing"

	"github.com/afin-bench/afin/records"
)

// The banner attributes AFIN numbers only to the checkpoint the records
// name, and says when that checkpoint is not the paper's network.
func TestBanner(t *testing.T) {
	ran := func(hashes ...string) []records.Record {
		var out []records.Record
		for _, h := range hashes {
			r := records.Record{Method: "afin"}
			r.Provenance.Checkpoint = h
			out = append(out, r)
		}
		return out
	}
	small := &CheckpointInfo{Dir: "ck", Hash: "aaaaaaaaaaaaaaaa", Config: "small", Decoder: "gaussian", Params: 86501, Step: 5706,
		Weights: "ema", Source: "afin train", Support: "d 1–8, N 1–64", TrainSteps: 5700, TrainSeconds: 7200}
	paper := *small
	paper.Config, paper.Params = "paper", 4_550_011
	for _, c := range []struct {
		name    string
		recs    []records.Record
		ck      *CheckpointInfo
		want    []string
		notWant string
	}{
		{"no AFIN records", ran(""), small, nil, "AFIN"},
		{"small checkpoint", ran("aaaaaaaaaaaaaaaa"), small, []string{"aaaaaaaaaaaa: small config", "86,501 parameters", "d 1–8, N 1–64", "5,700 steps in 2.0 h", "not the paper's network"}, ""},
		{"paper network", ran("aaaaaaaaaaaaaaaa"), &paper, []string{"4,550,011 parameters"}, "not the paper's network"},
		{"other checkpoint ran", ran("bbbbbbbbbbbbbbbb"), small, []string{"from checkpoint bbbbbbbbbbbb, not from ck"}, "86,501"},
		{"unreadable", ran("aaaaaaaaaaaaaaaa"), &CheckpointInfo{Err: "no config.json"}, []string{"could not be read (no config.json)"}, ""},
		{"two checkpoints", ran("aaaaaaaaaaaaaaaa", "cccccccccccccccc"), small, []string{"name 2 checkpoints"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := strings.Join(Banner(c.recs, c.ck), "\n")
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("banner lacks %q:\n%s", w, got)
				}
			}
			if c.want == nil && got != "" {
				t.Errorf("banner %q, want none", got)
			}
			if c.notWant != "" && strings.Contains(got, c.notWant) {
				t.Errorf("banner has %q:\n%s", c.notWant, got)
			}
		})
	}
}
