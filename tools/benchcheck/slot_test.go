package main

import (
	"archive/tar"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeArchive(t *testing.T, path string, names ...string) {
	t.Helper()
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(fh)
	tw := tar.NewWriter(zw)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []interface{ Close() error }{tw, zw, fh} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSlotProblems(t *testing.T) {
	dir := t.TempDir()
	writeArchive(t, filepath.Join(dir, "full.tar.gz"), slotArchiveNeeds...)
	writeArchive(t, filepath.Join(dir, "part.tar.gz"), "config.json", "train.jsonl")
	const eval = `{"cells": [{"d": 2, "n": 8}]}`
	good := `{"status": "ok", "device": "gpu", "git_commit": "x", "step": 10, "programs": 16, "archive": "full.tar.gz", "eval": ` + eval + `}`
	for _, tc := range []struct{ name, json, want string }{
		{"all ok", good, ""},
		{"failed", strings.Replace(good, `"ok"`, `"failed"`, 1), `status "failed"`},
		{"no step", strings.Replace(good, `"step": 10`, `"step": 0`, 1), "no training step"},
		{"too many programs", strings.Replace(good, `"programs": 16`, `"programs": 30`, 1), "30 GoMLX programs"},
		{"no eval", strings.Replace(good, eval, "null", 1), "no held-out evaluation"},
		{"archive short", strings.Replace(good, "full.tar.gz", "part.tar.gz", 1), "archive lacks model.safetensors"},
		{"archive absent", strings.Replace(good, "full.tar.gz", "none.tar.gz", 1), "archive:"},
		{"not JSON", "{", "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := slotProblems(filepath.Join(dir, "slot.json"), []byte(tc.json))
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
