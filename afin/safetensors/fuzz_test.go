package safetensors

import (
	"bytes"
	"math"
	"slices"
	"testing"
)

// FuzzDecode: Decode never panics, and a stream it accepts describes its
// tensors truthfully (as many values as the shape says) and survives
// Encode and Decode again unchanged.
func FuzzDecode(f *testing.F) {
	data := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f}
	f.Add(golden(`{"__metadata__":{"k":"v"},"w":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]},"s":{"dtype":"F64","shape":[],"data_offsets":[8,16]}}`, data))
	f.Add(golden(`{"w":{"dtype":"F32","shape":[0,4],"data_offsets":[0,0]}}`, nil))
	f.Add(golden(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"v":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, data))
	// A file as afin writes it (small: the fuzzer mutates whole inputs).
	var enc bytes.Buffer
	ts := []Tensor{{Name: "enc.w", Shape: []int{2, 3}, Data: []float32{1, -2, 3.5, 0, 1e-3, 7}}, {Name: "enc.b", Shape: []int{3}, Data: []float32{0.5, 0, -1}}}
	if err := Encode(&enc, ts, map[string]string{"format": "afin"}); err != nil {
		f.Fatal(err)
	}
	f.Add(enc.Bytes())
	f.Fuzz(func(t *testing.T, raw []byte) {
		file, err := Decode(raw)
		if err != nil {
			if file != nil {
				t.Fatal("a file with an error")
			}
			return
		}
		if len(file.Order) != len(file.Tensors) {
			t.Fatalf("%d names in order, %d tensors", len(file.Order), len(file.Tensors))
		}
		ts := make([]Tensor, 0, len(file.Order))
		for _, name := range file.Order {
			tn, ok := file.Tensors[name]
			if !ok {
				t.Fatalf("ordered name %q has no tensor", name)
			}
			n := 1.0
			for _, s := range tn.Shape {
				n *= float64(s)
			}
			if n != float64(len(tn.Data)) {
				t.Fatalf("tensor %q: shape %v holds %g values, data has %d", name, tn.Shape, n, len(tn.Data))
			}
			ts = append(ts, tn)
		}
		var buf bytes.Buffer
		if err := Encode(&buf, ts, file.Metadata); err != nil {
			t.Fatalf("accepted tensors do not encode: %v", err)
		}
		back, err := Decode(buf.Bytes())
		if err != nil {
			t.Fatalf("encoded file does not decode: %v", err)
		}
		if !slices.Equal(back.Order, file.Order) || len(back.Metadata) != len(file.Metadata) {
			t.Fatalf("round trip changed order %v → %v or metadata %v → %v", file.Order, back.Order, file.Metadata, back.Metadata)
		}
		for _, tn := range ts {
			b := back.Tensors[tn.Name]
			if !slices.Equal(b.Shape, tn.Shape) || !sameBits(b.Data, tn.Data) {
				t.Fatalf("tensor %q changed in the round trip", tn.Name)
			}
		}
	})
}

func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}
