package safetensors

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// IndexFile is the name of a sharded collection's index.
const IndexFile = "model.safetensors.index.json"

// SingleFile is the name of an unsharded collection.
const SingleFile = "model.safetensors"

// Index is the Hugging Face index of a sharded collection.
type Index struct {
	Metadata  map[string]any    `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// WriteFunc writes one file of a collection; callers pass an atomic
// writer (temporary file and rename).
type WriteFunc func(name string, write func(io.Writer) error) error

// WriteCollection writes ts as model.safetensors when their data fit in
// maxBytes, else as shards model-0000k-of-0000N.safetensors of at most
// maxBytes of data each (a single tensor larger than that gets a shard of
// its own) plus the index. It returns the names of the files written.
func WriteCollection(write WriteFunc, ts []Tensor, metadata map[string]string, maxBytes int64) ([]string, error) {
	var groups [][]Tensor
	var cur []Tensor
	var curBytes, total int64
	for _, t := range ts {
		b := 4 * int64(len(t.Data))
		total += b
		if len(cur) > 0 && curBytes+b > maxBytes {
			groups = append(groups, cur)
			cur, curBytes = nil, 0
		}
		cur = append(cur, t)
		curBytes += b
	}
	if len(cur) > 0 || len(groups) == 0 {
		groups = append(groups, cur)
	}
	if len(groups) == 1 {
		err := write(SingleFile, func(w io.Writer) error { return Encode(w, groups[0], metadata) })
		return []string{SingleFile}, err
	}
	idx := Index{Metadata: map[string]any{"total_size": total}, WeightMap: map[string]string{}}
	var names []string
	for k, g := range groups {
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", k+1, len(groups))
		if err := write(name, func(w io.Writer) error { return Encode(w, g, metadata) }); err != nil {
			return nil, err
		}
		for _, t := range g {
			idx.WeightMap[t.Name] = name
		}
		names = append(names, name)
	}
	js, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := write(IndexFile, func(w io.Writer) error { _, err := w.Write(append(js, '\n')); return err }); err != nil {
		return nil, err
	}
	return append(names, IndexFile), nil
}

// CollectionFiles lists the files of the collection in dir: the index
// and its shards, or model.safetensors.
func CollectionFiles(dir string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(dir, SingleFile)); err != nil {
			return nil, fmt.Errorf("no %s or %s in %s", SingleFile, IndexFile, dir)
		}
		return []string{SingleFile}, nil
	}
	if err != nil {
		return nil, err
	}
	var idx Index
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, IndexFile), err)
	}
	seen := map[string]bool{}
	files := []string{IndexFile}
	for _, f := range idx.WeightMap {
		if filepath.Base(f) != f {
			return nil, fmt.Errorf("%s: shard name %q is not a plain file name", IndexFile, f)
		}
		if !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	sort.Strings(files[1:])
	return files, nil
}

// ReadCollection reads every tensor of the collection in dir, checking
// that each shard holds exactly the tensors the index assigns to it.
func ReadCollection(dir string) (map[string]Tensor, map[string]string, error) {
	files, err := CollectionFiles(dir)
	if err != nil {
		return nil, nil, err
	}
	if files[0] == SingleFile {
		f, err := ReadFile(filepath.Join(dir, SingleFile))
		if err != nil {
			return nil, nil, err
		}
		return f.Tensors, f.Metadata, nil
	}
	data, _ := os.ReadFile(filepath.Join(dir, IndexFile))
	var idx Index
	_ = json.Unmarshal(data, &idx)
	out := map[string]Tensor{}
	var meta map[string]string
	for _, name := range files[1:] {
		f, err := ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, nil, err
		}
		meta = f.Metadata
		for tn, t := range f.Tensors {
			if idx.WeightMap[tn] != name {
				return nil, nil, fmt.Errorf("%s: tensor %s is not assigned to this shard by %s", name, tn, IndexFile)
			}
			out[tn] = t
		}
	}
	for tn, file := range idx.WeightMap {
		if _, ok := out[tn]; !ok {
			return nil, nil, fmt.Errorf("%s: tensor %s is missing from %s", IndexFile, tn, file)
		}
	}
	return out, meta, nil
}
