// Package torchtest writes run directories in the format of the authors'
// PyTorch trainer (config.json + final.pt as torch.save writes it: a zip
// holding a protocol-2 pickle of the payload and one raw little-endian
// file per tensor storage), for tests of the importer. Only what those
// tests need is written: a dict with "step" and state dicts of float32
// tensors.
package torchtest

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// Tensor is one state-dict entry in PyTorch's layout (row-major, Linear
// weights (out, in)).
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// pickler emits protocol-2 pickle opcodes.
type pickler struct{ bytes.Buffer }

func (p *pickler) op(b ...byte) { p.Write(b) }

func (p *pickler) str(s string) {
	p.op('X')
	binary.Write(p, binary.LittleEndian, uint32(len(s)))
	p.WriteString(s)
}

func (p *pickler) int(v int) {
	p.op('J')
	binary.Write(p, binary.LittleEndian, int32(v))
}

func (p *pickler) global(module, name string) { p.WriteString("c" + module + "\n" + name + "\n") }

func (p *pickler) ints(vs []int) {
	p.op('(')
	for _, v := range vs {
		p.int(v)
	}
	p.op('t')
}

// tensor pickles torch._utils._rebuild_tensor_v2(storage, 0, size,
// stride, False, OrderedDict()) with the storage as a persistent id.
func (p *pickler) tensor(key string, t Tensor) {
	p.global("torch._utils", "_rebuild_tensor_v2")
	p.op('(')
	p.op('(')
	p.str("storage")
	p.global("torch", "FloatStorage")
	p.str(key)
	p.str("cpu")
	p.int(len(t.Data))
	p.op('t', 'Q')
	p.int(0)
	p.ints(t.Shape)
	stride := make([]int, len(t.Shape))
	s := 1
	for i := len(t.Shape) - 1; i >= 0; i-- {
		stride[i] = s
		s *= t.Shape[i]
	}
	p.ints(stride)
	p.op(0x89) // NEWFALSE: requires_grad
	p.global("collections", "OrderedDict")
	p.op(')', 'R')
	p.op('t', 'R')
}

// WriteRun writes dir/config.json (with args) and dir/final.pt holding
// the given state dicts (e.g. "ema_model_state_dict") and a step.
func WriteRun(dir string, args map[string]any, step int, dicts map[string][]Tensor) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg, err := json.MarshalIndent(map[string]any{"args": args}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644); err != nil {
		return err
	}
	var p pickler
	p.op(0x80, 2, '}', '(')
	p.str("step")
	p.int(step)
	var storages [][]float32
	for name, ts := range dicts {
		p.str(name)
		p.global("collections", "OrderedDict")
		p.op(')', 'R', '(')
		for _, t := range ts {
			p.str(t.Name)
			p.tensor(fmt.Sprint(len(storages)), t)
			storages = append(storages, t.Data)
		}
		p.op('u')
	}
	p.op('u', '.')
	return writeZip(filepath.Join(dir, "final.pt"), p.Bytes(), storages)
}

func writeZip(path string, pkl []byte, storages [][]float32) error {
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	add := func(name string, data []byte) error {
		w, err := z.CreateHeader(&zip.FileHeader{Name: "final/" + name, Method: zip.Store})
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	if err := add("data.pkl", pkl); err != nil {
		return err
	}
	for k, s := range storages {
		raw := make([]byte, 4*len(s))
		for i, v := range s {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
		}
		if err := add(fmt.Sprintf("data/%d", k), raw); err != nil {
			return err
		}
	}
	if err := add("version", []byte("3\n")); err != nil {
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
