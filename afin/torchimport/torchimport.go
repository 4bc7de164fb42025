// Package torchimport reads the run directories written by the authors'
// PyTorch AFIN trainer (joohwanko/AFINs): config.json (the trainer's
// arguments) and final.pt (torch.save's zip + pickle format, read with
// github.com/nlpodyssey/gopickle). It maps every tensor of the state dict
// onto afin's typed declaration (package arch) and fails, naming the file
// and the tensor, on anything unmapped on either side or of the wrong
// shape. The result is written as a portable checkpoint by package afin.
package torchimport

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"
)

// Error is a problem with one input file.
type Error struct {
	File    string
	Problem string
}

// Error formats the problem as "FILE: PROBLEM", one line.
func (e *Error) Error() string { return e.File + ": " + e.Problem }

func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Run is an imported run: afin's configuration, the network with the
// imported weights, and what to record about it.
type Run struct {
	Net     *arch.Network
	Support checkpoint.Support
	Step    int
	Weights string   // "ema", or "raw" when the run has no EMA weights
	Notes   []string // messages for the user (fallbacks, unused modules)
}

// ReadRun imports the run directory dir (config.json + final.pt).
func ReadRun(dir string) (*Run, error) {
	cfg, sup, err := readConfig(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "final.pt")
	payload, err := loadPayload(path)
	if err != nil {
		return nil, err
	}
	run := &Run{Support: sup, Weights: "ema"}
	sd := stateDict(payload, "ema_model_state_dict")
	if sd == nil {
		sd = stateDict(payload, "model_state_dict")
		if sd == nil {
			return nil, &Error{File: path, Problem: "no model_state_dict or ema_model_state_dict (not an AFIN training checkpoint)"}
		}
		run.Weights = "raw"
		run.Notes = append(run.Notes, "final.pt has no EMA weights; imported the raw model weights (as the authors' loader does)")
	}
	if step, ok := dictGet(payload, "step").(int); ok {
		run.Step = step
	}
	run.Net = arch.MustNew(cfg)
	note, err := assign(run.Net, sd)
	if err != nil {
		return nil, &Error{File: path, Problem: err.Error()}
	}
	if note != "" {
		run.Notes = append(run.Notes, note)
	}
	return run, nil
}

// loadPayload unpickles final.pt, refusing anything but the zip format.
func loadPayload(path string) (payload any, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{File: path, Problem: "cannot read: " + errText(err)}
	}
	var magic [4]byte
	_, rerr := f.Read(magic[:])
	f.Close()
	if rerr != nil || string(magic[:]) != "PK\x03\x04" {
		return nil, &Error{File: path, Problem: "not a PyTorch checkpoint (torch.save zip format expected)"}
	}
	// The pickle reader is third-party code fed with user files: a panic
	// on malformed input is reported as bad input, not a crash.
	defer func() {
		if r := recover(); r != nil {
			payload, err = nil, &Error{File: path, Problem: fmt.Sprintf("corrupt checkpoint: %v", r)}
		}
	}()
	payload, err = pytorch.Load(path)
	if err != nil {
		return nil, &Error{File: path, Problem: "truncated or corrupt checkpoint: " + err.Error()}
	}
	return payload, nil
}

// dictGet reads a key of a pickled dict (plain or ordered).
func dictGet(d any, key string) any {
	switch d := d.(type) {
	case *types.Dict:
		v, _ := d.Get(key)
		return v
	case *types.OrderedDict:
		v, _ := d.Get(key)
		return v
	case map[any]any:
		return d[key]
	}
	return nil
}

// stateDict returns the named state dict as name → tensor, or nil.
func stateDict(payload any, key string) map[string]*pytorch.Tensor {
	out := map[string]*pytorch.Tensor{}
	add := func(k, v any) {
		if name, ok := k.(string); ok {
			if t, ok := v.(*pytorch.Tensor); ok {
				out[name] = t
			}
		}
	}
	switch d := dictGet(payload, key).(type) {
	case *types.OrderedDict:
		for e := d.List.Front(); e != nil; e = e.Next() {
			ent := e.Value.(*types.OrderedDictEntry)
			add(ent.Key, ent.Value)
		}
	case *types.Dict:
		for _, ent := range *d {
			add(ent.Key, ent.Value)
		}
	default:
		return nil
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// assign copies every state-dict tensor into net. The authors' model
// object holds both decoders; the one net does not use must match the
// declaration of the other decoder and is then dropped (a note says so).
func assign(net *arch.Network, sd map[string]*pytorch.Tensor) (note string, err error) {
	m := mapNetwork(net)
	other := net.Cfg
	other.Decoder = map[string]string{"gaussian": "flow", "flow": "gaussian"}[net.Cfg.Decoder]
	unused := mapping{}
	if alt, err := arch.New(other); err == nil {
		for k, v := range mapNetwork(alt) {
			if _, shared := m[k]; !shared {
				unused[k] = v
			}
		}
	}
	names := make([]string, 0, len(sd))
	for k := range sd {
		names = append(names, k)
	}
	sort.Strings(names)
	dropped := 0
	for _, name := range names {
		tg, ok := m[name]
		if !ok {
			if tg, ok = unused[name]; !ok {
				return "", fmt.Errorf("tensor %s has no counterpart in afin's %s network (a checkpoint of another model or configuration?)", name, net.Cfg.Decoder)
			}
			dropped++
		}
		data, err := tensorData(name, sd[name], tg)
		if err != nil {
			return "", err
		}
		tg.t.Data = data
	}
	for name, tg := range m {
		if tg.t.Data == nil {
			return "", fmt.Errorf("tensor %s (afin %s) is missing", name, tg.t.Name)
		}
	}
	if dropped > 0 {
		note = fmt.Sprintf("dropped the %d tensors of the unused %s decoder", dropped, other.Decoder)
	}
	return note, nil
}

// tensorData returns a tensor's values in afin's layout (row-major,
// Linear weights transposed to (in, out)), checking its shape.
func tensorData(name string, t *pytorch.Tensor, tg target) ([]float32, error) {
	want := tg.t.Shape
	if tg.transpose {
		want = []int{want[1], want[0]}
	}
	if !slices.Equal(t.Size, want) {
		return nil, fmt.Errorf("tensor %s has shape %v, afin's %s needs %v", name, t.Size, tg.t.Name, want)
	}
	var src []float64
	switch s := t.Source.(type) {
	case *pytorch.FloatStorage:
		src = make([]float64, len(s.Data))
		for i, v := range s.Data {
			src[i] = float64(v)
		}
	case *pytorch.DoubleStorage:
		src = s.Data
	default:
		return nil, fmt.Errorf("tensor %s: storage %T is not float32/float64", name, t.Source)
	}
	// Gather through the strides: state-dict tensors may be views.
	n := tg.t.Size()
	out := make([]float32, n)
	idx := make([]int, len(t.Size))
	for k := range n {
		off := t.StorageOffset
		for a, i := range idx {
			off += i * t.Stride[a]
		}
		if off < 0 || off >= len(src) {
			return nil, fmt.Errorf("tensor %s: view outside its storage", name)
		}
		v := float32(src[off])
		if tg.transpose { // element (o, i) of the (out, in) weight goes to (i, o)
			out[idx[1]*t.Size[0]+idx[0]] = v
		} else {
			out[k] = v
		}
		for a := len(idx) - 1; a >= 0; a-- {
			if idx[a]++; idx[a] < t.Size[a] {
				break
			}
			idx[a] = 0
		}
	}
	return out, nil
}
