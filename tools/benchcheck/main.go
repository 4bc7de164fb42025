// Command benchcheck fails when a deploy/gpu/bench.sh JSON file misses a
// stage or holds a stage that did not pass: CI runs the script in tiny
// mode and checks its output with this, so a broken stage never reaches
// the GPU.
//
//	go run ./tools/benchcheck [-allow-skip peer_torch] bench.json
//	go run ./tools/benchcheck -slot slot.json
//
// Every stage bench.sh runs must be present (one train_gomlx_<P> per
// precision the file's settings list) with status "ok"; -allow-skip names
// the stages that may be "skipped" instead (a comma-separated list).
// With -slot it checks deploy/gpu/slot.sh's JSON instead: training took
// steps, the held-out evaluation ran, and the archive beside it holds
// the checkpoint to commit.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
)

// fixedStages are the stages of every run; the training stages depend on
// the precisions.
var fixedStages = []string{"compile_probe", "check_small_full", "check_small_flow", "peer_torch",
	"infer_gomlx", "infer_native", "suite_native", "suite_gomlx"}

type benchFile struct {
	Device   *string `json:"device"`
	HostCPUs *int    `json:"host_cpus"`
	Commit   *string `json:"git_commit"`
	Date     *string `json:"date"`
	Settings struct {
		Precisions string `json:"train_precisions"`
	} `json:"settings"`
	Stages map[string]struct {
		Status   string          `json:"status"`
		Error    string          `json:"error"`
		Programs *int            `json:"programs"`
		Result   json.RawMessage `json:"result"`
	} `json:"stages"`
}

// maxPrograms bounds the GoMLX programs a stage may compile: the bucketed
// shapes keep a whole training run, or a suite, within it (issue 33).
const maxPrograms = 24

// problems lists what is wrong with a bench.sh JSON file.
func problems(data []byte, allowSkip map[string]bool) []string {
	var f benchFile
	if err := json.Unmarshal(data, &f); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	var out []string
	if f.Device == nil || f.HostCPUs == nil || f.Commit == nil || f.Date == nil {
		out = append(out, "missing one of device, host_cpus, git_commit, date")
	}
	want := append([]string(nil), fixedStages...)
	precisions := strings.Fields(f.Settings.Precisions)
	if len(precisions) == 0 {
		out = append(out, "settings.train_precisions is empty")
	}
	for _, p := range precisions {
		want = append(want, "train_gomlx_"+p)
	}
	for _, name := range want {
		st, ok := f.Stages[name]
		switch {
		case !ok:
			out = append(out, name+": missing")
		case st.Status == "skipped" && allowSkip[name]:
		case st.Status != "ok":
			out = append(out, fmt.Sprintf("%s: status %q: %s", name, st.Status, st.Error))
		case st.Error != "":
			out = append(out, name+": "+st.Error)
		case st.Programs != nil && *st.Programs > maxPrograms:
			out = append(out, fmt.Sprintf("%s: %d GoMLX programs compiled, over %d", name, *st.Programs, maxPrograms))
		}
	}
	return out
}

func main() {
	skip := flag.String("allow-skip", "", "comma-separated stages that may be skipped")
	slot := flag.Bool("slot", false, "check a deploy/gpu/slot.sh JSON file and its archive")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: benchcheck [-allow-skip STAGES] bench.json | benchcheck -slot slot.json")
		os.Exit(2)
	}
	data, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcheck:", err)
		os.Exit(2)
	}
	allow := map[string]bool{}
	for _, s := range strings.Split(*skip, ",") {
		allow[strings.TrimSpace(s)] = true
	}
	ps := problems(data, allow)
	if *slot {
		ps = slotProblems(flag.Arg(0), data)
	}
	if len(ps) > 0 {
		for _, p := range ps {
			fmt.Fprintln(os.Stderr, "benchcheck:", p)
		}
		os.Exit(1)
	}
	if *slot {
		fmt.Fprintf(os.Stderr, "benchcheck: %s trained, evaluated and packed its checkpoint\n", flag.Arg(0))
		return
	}
	fmt.Fprintf(os.Stderr, "benchcheck: %s has every stage, none failed\n", flag.Arg(0))
}
