package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// slotFile is what deploy/gpu/slot.sh writes.
type slotFile struct {
	Status   string          `json:"status"`
	Reason   string          `json:"reason"`
	Device   *string         `json:"device"`
	Commit   *string         `json:"git_commit"`
	Step     *int            `json:"step"`
	Programs *int            `json:"programs"`
	Archive  string          `json:"archive"`
	Eval     json.RawMessage `json:"eval"`
}

// slotArchiveNeeds are the files a checkpoint to commit must hold.
var slotArchiveNeeds = []string{"config.json", "model.safetensors", "train.jsonl", "eval.json"}

// slotProblems lists what is wrong with a slot.sh JSON file (data, read
// from path) and the archive beside it.
func slotProblems(path string, data []byte) []string {
	var f slotFile
	if err := json.Unmarshal(data, &f); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	var out []string
	if f.Status != "ok" {
		out = append(out, fmt.Sprintf("status %q: %s", f.Status, f.Reason))
	}
	if f.Device == nil || f.Commit == nil {
		out = append(out, "missing device or git_commit")
	}
	if f.Step == nil || *f.Step < 1 {
		out = append(out, "no training step")
	}
	if f.Programs != nil && *f.Programs > maxPrograms {
		out = append(out, fmt.Sprintf("%d GoMLX programs compiled, over %d", *f.Programs, maxPrograms))
	}
	var cells struct {
		Cells []json.RawMessage `json:"cells"`
	}
	if len(f.Eval) == 0 || string(f.Eval) == "null" || json.Unmarshal(f.Eval, &cells) != nil || len(cells.Cells) == 0 {
		out = append(out, "no held-out evaluation")
	}
	if f.Archive == "" {
		return append(out, "no archive named")
	}
	names, err := tarNames(filepath.Join(filepath.Dir(path), f.Archive))
	if err != nil {
		return append(out, "archive: "+err.Error())
	}
	for _, n := range slotArchiveNeeds {
		if !names[n] {
			out = append(out, "archive lacks "+n)
		}
	}
	return out
}

// tarNames lists the files of a .tar.gz.
func tarNames(path string) (map[string]bool, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	names := map[string]bool{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		names[h.Name] = true
	}
}
