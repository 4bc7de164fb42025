package main

import (
	"strings"
	"testing"
)

func TestProblems(t *testing.T) {
	const head = `{"device": "cpu", "host_cpus": 2, "git_commit": "x", "date": "d", "settings": {"train_precisions": "bf16"}, "stages": {`
	const rest = `"compile_probe": {"status": "ok"}, "check_small_full": {"status": "ok"}, "check_small_flow": {"status": "ok"},
		"infer_gomlx": {"status": "ok"}, "infer_native": {"status": "ok"},
		"suite_native": {"status": "ok"}, "suite_gomlx": {"status": "ok"}, "train_gomlx_bf16": {"status": "ok"}`
	for _, tc := range []struct {
		name, json, allow, want string // want: "" for no problem, else a substring of one
	}{
		{"all ok", head + rest + `, "peer_torch": {"status": "ok"}}}`, "", ""},
		{"allowed skip", head + rest + `, "peer_torch": {"status": "skipped"}}}`, "peer_torch", ""},
		{"skip not allowed", head + rest + `, "peer_torch": {"status": "skipped"}}}`, "", `peer_torch: status "skipped"`},
		{"a failed stage", head + rest + `, "peer_torch": {"status": "error", "error": "exit 1: boom"}}}`, "peer_torch", "boom"},
		{"ok with an error", head + rest + `, "peer_torch": {"status": "ok", "error": "late"}}}`, "", "late"},
		{"a missing stage", head + rest + `}}`, "peer_torch", "peer_torch: missing"},
		{"a second precision", strings.Replace(head, `"bf16"`, `"bf16 tf32"`, 1) + rest + `, "peer_torch": {"status": "ok"}}}`, "", "train_gomlx_tf32: missing"},
		{"too many programs", strings.Replace(head+rest, `"suite_gomlx": {"status": "ok"}`, `"suite_gomlx": {"status": "ok", "programs": 25}`, 1) + `, "peer_torch": {"status": "ok"}}}`, "", "25 GoMLX programs"},
		{"no header", `{"stages": {}}`, "", "missing one of device"},
		{"not JSON", head + rest, "", "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			allow := map[string]bool{tc.allow: tc.allow != ""}
			ps := problems([]byte(tc.json), allow)
			if tc.want == "" {
				if len(ps) != 0 {
					t.Errorf("problems %q, want none", ps)
				}
				return
			}
			if !strings.Contains(strings.Join(ps, "\n"), tc.want) {
				t.Errorf("problems %q, want one mentioning %q", ps, tc.want)
			}
		})
	}
}
