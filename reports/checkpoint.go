package reports

import (
	"fmt"
	"sort"
	"strings"

	"github.com/afin-bench/afin/records"
)

// paperParams are the paper's network sizes (its Table 8: Gaussian and
// flow decoder). A checkpoint of another size is not the paper's
// network, and its AFIN numbers must not be read as the paper's.
var paperParams = map[int]bool{4_550_011: true, 5_051_458: true}

// CheckpointInfo describes the checkpoint a report's AFIN numbers are
// attributed to. The reports package does not read checkpoints itself
// (the caller does, from the records' provenance or --checkpoint), so it
// stays free of the network's dependencies.
type CheckpointInfo struct {
	Dir     string
	Hash    string // checkpoint.Hash of the inference files, as in the records' provenance
	Config  string // configuration name: "small", "paper", ...
	Decoder string
	Params  int
	Step    int
	Weights string // "ema" or "raw"
	Source  string
	// Support is the training support in words (d and N ranges, families).
	Support string
	// TrainSeconds and TrainSteps come from the training log when the
	// directory has one (0 when not).
	TrainSeconds float64
	TrainSteps   int
	// Err says why the checkpoint could not be read ("" when it was).
	Err string
}

// Banner is the report's statement of which checkpoint produced its AFIN
// numbers, as lines of plain text; the first is the headline. It checks
// the described checkpoint against the hashes the AFIN records carry, so
// a banner never attributes numbers to a checkpoint that did not make
// them. Empty when no record ran AFIN.
func Banner(recs []records.Record, ck *CheckpointInfo) []string {
	used := afinCheckpoints(recs)
	if len(used) == 0 {
		return nil
	}
	if ck == nil || ck.Err != "" {
		why := "no checkpoint was given"
		if ck != nil {
			why = ck.Err
		}
		return []string{fmt.Sprintf("AFIN numbers come from checkpoint %s; its description could not be read (%s): pass --checkpoint DIR.", joinShort(used), why)}
	}
	var out []string
	match := false
	for _, h := range used {
		match = match || h == ck.Hash
	}
	if !match {
		return []string{fmt.Sprintf("AFIN numbers come from checkpoint %s, not from %s (%s, hash %s) that this report was pointed to: pass --checkpoint DIR of the checkpoint that ran.",
			joinShort(used), ck.Dir, ck.Config, short(ck.Hash))}
	}
	out = append(out, fmt.Sprintf("AFIN numbers come from checkpoint %s: %s config, %s decoder, %s parameters, %s weights at step %d.",
		short(ck.Hash), ck.Config, ck.Decoder, groupDigits(ck.Params), ck.Weights, ck.Step))
	out = append(out, "Training support: "+ck.Support+". AFIN runs outside it are flagged in the tables.")
	if ck.TrainSeconds > 0 {
		// The log runs on through warm starts (a checkpoint copied and
		// resumed keeps its parent's lines), so this is the whole history.
		out = append(out, fmt.Sprintf("Training compute: %s steps in %.1f h of training wall-clock, warm starts included (its train.jsonl); source: %s.",
			groupDigits(ck.TrainSteps), ck.TrainSeconds/3600, ck.Source))
	} else {
		out = append(out, "Training compute: not recorded beside the checkpoint (no train.jsonl); source: "+ck.Source+".")
	}
	if !paperParams[ck.Params] {
		out = append(out, fmt.Sprintf("This is not the paper's network (%s or %s parameters, 10⁵ steps on an H100): its AFIN and AFIN+SNIS numbers measure this checkpoint, not the paper's AFIN.",
			groupDigits(4_550_011), groupDigits(5_051_458)))
	}
	if len(used) > 1 {
		out = append(out, fmt.Sprintf("The records name %d checkpoints (%s); the description above is of %s only.", len(used), joinShort(used), short(ck.Hash)))
	}
	return out
}

// afinCheckpoints are the distinct checkpoint hashes of the records that
// ran the network, sorted.
func afinCheckpoints(recs []records.Record) []string {
	seen := map[string]bool{}
	for i := range recs {
		if h := recs[i].Provenance.Checkpoint; h != "" {
			seen[h] = true
		}
	}
	out := make([]string, 0, len(seen))
	for h := range seen {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

func joinShort(hs []string) string {
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = short(h)
	}
	return strings.Join(s, ", ")
}

// groupDigits writes 4550011 as "4,550,011".
func groupDigits(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + groupDigits(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
