package safetensors

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// golden builds a stream by hand from the format's definition, without
// Encode: header length, JSON header, raw little-endian data.
func golden(header string, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(data)
	return b.Bytes()
}

func TestDecodeHandBuiltFile(t *testing.T) {
	// 1.0f = 0x3f800000, -2.0f = 0xc0000000, 0.5 (F64) = 0x3fe0000000000000.
	data := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f}
	h := `{"__metadata__":{"k":"v"},"w":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]},"s":{"dtype":"F64","shape":[],"data_offsets":[8,16]}}`
	f, err := Decode(golden(h, data))
	if err != nil {
		t.Fatal(err)
	}
	if w := f.Tensors["w"]; len(w.Data) != 2 || w.Data[0] != 1 || w.Data[1] != -2 || w.Shape[1] != 2 {
		t.Errorf("w = %+v", w)
	}
	if s := f.Tensors["s"]; len(s.Data) != 1 || s.Data[0] != 0.5 || len(s.Shape) != 0 {
		t.Errorf("s = %+v", s)
	}
	if f.Metadata["k"] != "v" || strings.Join(f.Order, ",") != "w,s" {
		t.Errorf("metadata %v, order %v", f.Metadata, f.Order)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	ts := []Tensor{{Name: "b", Shape: []int{3}, Data: []float32{1, 2, 3}}, {Name: "a", Shape: []int{2, 2}, Data: []float32{-1, 0.25, 7, 8}}}
	var buf bytes.Buffer
	if err := Encode(&buf, ts, map[string]string{"format": "afin"}); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	if hl := binary.LittleEndian.Uint64(raw); (8+hl)%8 != 0 {
		t.Errorf("data section starts at %d, not 8-byte aligned", 8+hl)
	}
	f, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range ts {
		got := f.Tensors[want.Name]
		if !equal(got.Data, want.Data) || len(got.Shape) != len(want.Shape) {
			t.Errorf("%s: got %+v, want %+v", want.Name, got, want)
		}
	}
	if strings.Join(f.Order, ",") != "b,a" {
		t.Errorf("data order %v, want the written order b,a", f.Order)
	}
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDecodeRejectsBadFiles(t *testing.T) {
	data := make([]byte, 8)
	tests := []struct{ name, header, want string }{
		{"dtype", `{"w":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}`, "not supported"},
		{"size", `{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, "want 12"},
		{"outside", `{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}`, "outside"},
		{"overlap", `{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"v":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, "overlap"},
		{"json", `{"w":`, "header JSON"},
		{"empty name", `{"":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, "empty name"},
		// encoding/json alone takes "dtYpe" for dtype and a missing
		// data_offsets for [0, 0] (FuzzDecode found both).
		{"key case", `{"w":{"dtYpe":"F32","shape":[2],"data_offsets":[0,8]}}`, `no "dtype"`},
		{"no offsets", `{"w":{"dtype":"F32","shape":[0]}}`, `no "data_offsets"`},
		{"unknown key", `{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}}`, `unknown key "x"`},
		// Shapes whose product wraps int64 to the byte count (0 here):
		// decoded as an empty tensor, and a panic in make, before.
		{"product wraps to zero", `{"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`, "more values than any file"},
		{"bytes wrap to zero", `{"w":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}}`, "more values than any file"},
	}
	for _, tc := range tests {
		_, err := Decode(golden(tc.header, data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	for _, raw := range [][]byte{{1, 2}, golden(`{}`, nil)[:6], {255, 255, 255, 255, 0, 0, 0, 0}} {
		if _, err := Decode(raw); err == nil {
			t.Errorf("truncated %v: no error", raw)
		}
	}
}

func TestShardedCollection(t *testing.T) {
	var ts []Tensor
	for k := range 5 {
		d := make([]float32, 10)
		for i := range d {
			d[i] = float32(k*10 + i)
		}
		ts = append(ts, Tensor{Name: string(rune('a' + k)), Shape: []int{10}, Data: d})
	}
	for _, tc := range []struct {
		max   int64
		files int
	}{{1 << 20, 1}, {80, 4}, {40, 6}} {
		dir := t.TempDir()
		write := func(name string, f func(io.Writer) error) error {
			var b bytes.Buffer
			if err := f(&b); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644)
		}
		names, err := WriteCollection(write, ts, nil, tc.max)
		if err != nil {
			t.Fatal(err)
		}
		if len(names) != tc.files {
			t.Errorf("max %d: files %v, want %d", tc.max, names, tc.files)
		}
		got, _, err := ReadCollection(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range ts {
			if !equal(got[want.Name].Data, want.Data) {
				t.Errorf("max %d: %s differs", tc.max, want.Name)
			}
		}
		if tc.files > 1 {
			os.Remove(filepath.Join(dir, names[0]))
			if _, _, err := ReadCollection(dir); err == nil {
				t.Errorf("max %d: missing shard not reported", tc.max)
			}
		}
	}
}
