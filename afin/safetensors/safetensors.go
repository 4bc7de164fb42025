// Package safetensors reads and writes the safetensors tensor format
// (https://huggingface.co/docs/safetensors): an 8-byte little-endian
// header length n, n bytes of JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (offsets into the data
// section that follows the header) plus an optional "__metadata__" object
// of strings, then the raw little-endian tensor data. Large collections
// are sharded into several files with a "model.safetensors.index.json"
// whose "weight_map" names each tensor's file, as the Hugging Face tools
// do.
//
// Only what afin stores is supported: F32 tensors (reading also accepts
// F64 and converts). No maintained Go implementation is served by the
// module proxy, and the format is small enough to write and check here.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
)

// Tensor is one named float32 array, row-major.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

type headerEntry struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// maxHeader bounds the JSON header a reader accepts (the reference
// implementation's limit is 100 MB).
const maxHeader = 100 << 20

// Encode writes tensors (in the given order) and metadata as one
// safetensors stream.
func Encode(w io.Writer, ts []Tensor, metadata map[string]string) error {
	header := map[string]any{}
	if len(metadata) > 0 {
		header["__metadata__"] = metadata
	}
	var off int64
	for _, t := range ts {
		if t.Name == "__metadata__" || t.Name == "" {
			return fmt.Errorf("safetensors: invalid tensor name %q", t.Name)
		}
		if _, dup := header[t.Name]; dup {
			return fmt.Errorf("safetensors: duplicate tensor %q", t.Name)
		}
		if n := size(t.Shape); n != len(t.Data) {
			return fmt.Errorf("safetensors: %s: %d values for shape %v", t.Name, len(t.Data), t.Shape)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		end := off + 4*int64(len(t.Data))
		header[t.Name] = headerEntry{DType: "F32", Shape: shape, Offsets: [2]int64{off, end}}
		off = end
	}
	js, err := json.Marshal(header) // map keys are written sorted: deterministic
	if err != nil {
		return fmt.Errorf("safetensors: header: %w", err)
	}
	// Pad the header with spaces so the data starts 8-byte aligned.
	for len(js)%8 != 0 {
		js = append(js, ' ')
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(js)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := w.Write(js); err != nil {
		return err
	}
	buf := make([]byte, 0, 1<<16)
	for _, t := range ts {
		for _, v := range t.Data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) >= 1<<16 {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	_, err = w.Write(buf)
	return err
}

func size(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// File is a decoded safetensors stream.
type File struct {
	Metadata map[string]string
	Tensors  map[string]Tensor
	Order    []string // tensor names by data offset
}

// Decode parses a whole safetensors stream held in memory, checking the
// header against the data: every tensor's byte range must match its dtype
// and shape, lie inside the data and not overlap another.
func Decode(data []byte) (*File, error) {
	if len(data) < 8 {
		return nil, errors.New("safetensors: file shorter than its 8-byte header length")
	}
	hl := binary.LittleEndian.Uint64(data[:8])
	if hl > maxHeader || hl > uint64(len(data)-8) {
		return nil, fmt.Errorf("safetensors: header length %d exceeds the file (%d bytes)", hl, len(data))
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data[8 : 8+hl]))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("safetensors: header JSON: %w", err)
	}
	body := data[8+hl:]
	f := &File{Tensors: map[string]Tensor{}}
	type span struct {
		name       string
		begin, end int64
	}
	var spans []span
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &f.Metadata); err != nil {
				return nil, fmt.Errorf("safetensors: __metadata__ must map strings to strings: %w", err)
			}
			continue
		}
		if name == "" {
			// Encode refuses it too: a file read must be writable again.
			return nil, errors.New("safetensors: a tensor has an empty name")
		}
		e, err := parseEntry(msg)
		if err != nil {
			return nil, fmt.Errorf("safetensors: tensor %s: %w", name, err)
		}
		t, err := decodeTensor(name, e, body)
		if err != nil {
			return nil, err
		}
		f.Tensors[name] = t
		spans = append(spans, span{name, e.Offsets[0], e.Offsets[1]})
	}
	// Empty tensors share an offset, and the header (a JSON object)
	// records no order of its own: ties go by name, so a file decodes to
	// the same order however its header was written.
	sort.Slice(spans, func(i, j int) bool {
		a, b := spans[i], spans[j]
		if a.begin != b.begin {
			return a.begin < b.begin
		}
		if a.end != b.end {
			return a.end < b.end
		}
		return a.name < b.name
	})
	for i, s := range spans {
		if i > 0 && s.begin < spans[i-1].end {
			return nil, fmt.Errorf("safetensors: tensors %s and %s overlap", spans[i-1].name, s.name)
		}
		f.Order = append(f.Order, s.name)
	}
	return f, nil
}

// parseEntry reads one tensor's header entry. encoding/json matches
// field names without regard to case and leaves missing ones zero; the
// format has exactly three keys, all required, so the keys are checked
// as written ("dtYpe" or a missing data_offsets is a malformed file, not
// an empty tensor at offset 0).
func parseEntry(msg json.RawMessage) (headerEntry, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(msg, &keys); err != nil {
		return headerEntry{}, err
	}
	for _, k := range []string{"dtype", "shape", "data_offsets"} {
		if _, ok := keys[k]; !ok {
			return headerEntry{}, fmt.Errorf("no %q", k)
		}
	}
	if len(keys) != 3 {
		for k := range keys {
			if k != "dtype" && k != "shape" && k != "data_offsets" {
				return headerEntry{}, fmt.Errorf("unknown key %q", k)
			}
		}
	}
	var e headerEntry
	err := json.Unmarshal(msg, &e)
	return e, err
}

func decodeTensor(name string, e headerEntry, body []byte) (Tensor, error) {
	for _, s := range e.Shape {
		if s < 0 {
			return Tensor{}, fmt.Errorf("safetensors: tensor %s: negative dimension in %v", name, e.Shape)
		}
	}
	width := map[string]int64{"F32": 4, "F64": 8}[e.DType]
	if width == 0 {
		return Tensor{}, fmt.Errorf("safetensors: tensor %s: dtype %s is not supported (F32, F64)", name, e.DType)
	}
	b, end := e.Offsets[0], e.Offsets[1]
	if b < 0 || end < b || end > int64(len(body)) {
		return Tensor{}, fmt.Errorf("safetensors: tensor %s: data offsets [%d, %d] outside the %d data bytes", name, b, end, len(body))
	}
	// A shape whose byte count overflows int64 could wrap to the range's
	// length: it is refused, not decoded as another size.
	n, ok := elements(e.Shape, math.MaxInt64/width)
	if !ok {
		return Tensor{}, fmt.Errorf("safetensors: tensor %s: shape %v holds more values than any file", name, e.Shape)
	}
	if end-b != n*width {
		return Tensor{}, fmt.Errorf("safetensors: tensor %s: %d bytes for %s%v, want %d", name, end-b, e.DType, e.Shape, n*width)
	}
	raw := body[b:end]
	out := make([]float32, n)
	for i := range out {
		if width == 4 {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		} else {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])))
		}
	}
	return Tensor{Name: name, Shape: append([]int{}, e.Shape...), Data: out}, nil
}

// elements is the product of shape when it is at most limit (ok false
// otherwise), computed without overflow.
func elements(shape []int, limit int64) (n int64, ok bool) {
	if slices.Contains(shape, 0) {
		return 0, true
	}
	n = 1
	for _, s := range shape {
		if int64(s) > limit/n {
			return 0, false
		}
		n *= int64(s)
	}
	return n, true
}

// ReadFile decodes one safetensors file.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
