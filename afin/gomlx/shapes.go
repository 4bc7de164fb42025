package gomlx

import (
	"fmt"

	"github.com/afin-bench/afin/afin/arch"
	"github.com/afin-bench/afin/internal/optim"
)

// Program shapes. XLA compiles one program per input shape, so the
// engine pads every batch to a bounded set: the latent dimension d to
// dBuckets (coordinate masks keep the padded network equal to the
// unpadded one, see coords), the site count N to nBuckets and the batch
// to a chunk size. Over the training support (d ≤ 16, N ≤ 256) that is
// 4 × 4 = 16 buckets of a training pass's 7 block programs, one chunk
// size per bucket; the padding costs about 1.3× in d² and 1.3× in N over
// the training mixture, against a compile per new shape.
var (
	dBuckets = []int{4, 8, 12, 16}
	nBuckets = []int{16, 64, 128, 256}
)

// BucketD is the padded latent dimension of d: the smallest of dBuckets
// at least d, beyond them the next multiple of 8.
func BucketD(d int) int { return bucket(dBuckets, 8, d) }

// BucketN is the padded site count of n sites (likewise, multiples of 256
// beyond the last bucket).
func BucketN(n int) int { return bucket(nBuckets, 256, n) }

func bucket(bs []int, step, v int) int {
	for _, b := range bs {
		if v <= b {
			return b
		}
	}
	return (v + step - 1) / step * step
}

// Buckets lists the (d, N) buckets that cover d ≤ dMax and N ≤ nMax: the
// programs a training run over that support compiles.
func Buckets(dMax, nMax int) [][2]int {
	var out [][2]int
	for d := BucketD(1); ; d = BucketD(d + 1) {
		for n := BucketN(1); ; n = BucketN(n + 1) {
			out = append(out, [2]int{d, n})
			if n >= nMax {
				break
			}
		}
		if d >= dMax {
			break
		}
	}
	return out
}

// padded is a batch laid out at a program's shape (bB tasks, dB
// coordinates, nB sites) with what the masked graph needs beside it.
type padded struct {
	b      *arch.Batch
	cmask  []float32 // (bB, dB): 1 on each task's real coordinates
	dreal  []float32 // (bB): real coordinates per task
	weight []float32 // (bB): the loss weight of each task, 0 for padding
}

// padBatch lays tasks [from, from+bB) of b (those past b.B repeat task
// from, with weight 0) out at dB coordinates and nB sites. Descriptors of
// padded coordinates and sites are zero; padded sites have an all-zero
// family mask, as arch.NewBatch pads them. w is the weight of each real
// task.
func padBatch(b *arch.Batch, from, bB, dB, nB int, w float32) (*padded, error) {
	if dB < b.D || nB < b.NPad {
		return nil, fmt.Errorf("afin: cannot pad d=%d, N=%d down to %d, %d", b.D, b.NPad, dB, nB)
	}
	d := b.D
	src := func(t int) (int, bool) {
		if from+t < b.B {
			return from + t, true
		}
		return from, false
	}
	out := &arch.Batch{B: bB, D: dB, NPad: nB}
	p := &padded{b: out, cmask: make([]float32, bB*dB), dreal: make([]float32, bB), weight: make([]float32, bB)}
	for t := range bB {
		_, real := src(t)
		for i := range d {
			p.cmask[t*dB+i] = 1
		}
		p.dreal[t] = float32(d)
		if real {
			p.weight[t] = w
		}
	}
	// lay copies a (B, lead, coords…, width) array task by task.
	lay := func(a []float32, lead, srcLead, nc, width int) []float32 {
		o := make([]float32, bB*lead*pow(dB, nc)*width)
		// Over all cores: a padded batch of the paper's largest shapes is
		// hundreds of megabytes, which would leave the device waiting.
		optim.Each(bB, func(t int) {
			s, _ := src(t)
			for l := range srcLead {
				so := ((s*srcLead + l) * pow(d, nc)) * width
				do := ((t*lead + l) * pow(dB, nc)) * width
				if nc == 1 {
					copy(o[do:do+d*width], a[so:so+d*width])
					continue
				}
				for i := range d {
					copy(o[do+i*dB*width:do+(i*dB+d)*width], a[so+i*d*width:so+(i+1)*d*width])
				}
			}
		})
		return o
	}
	for f := range arch.PriorFamilies {
		out.PriorNode = append(out.PriorNode, lay(b.PriorNode[f], 1, 1, 1, arch.PriorNodeWidth[f]))
		out.PriorPair = append(out.PriorPair, lay(b.PriorPair[f], 1, 1, 2, arch.PriorPairWidth[f]))
	}
	for f := range arch.LikFamilies {
		out.LikNode = append(out.LikNode, lay(b.LikNode[f], nB, b.NPad, 1, arch.LikNodeWidth[f]))
		out.LikPair = append(out.LikPair, lay(b.LikPair[f], nB, b.NPad, 2, arch.LikPairWidth[f]))
	}
	np, nf := len(arch.PriorFamilies), len(arch.LikFamilies)
	out.PriorMask = make([]float32, bB*np)
	out.LikMask = make([]float32, bB*nB*nf)
	for t := range bB {
		s, _ := src(t)
		copy(out.PriorMask[t*np:(t+1)*np], b.PriorMask[s*np:(s+1)*np])
		copy(out.LikMask[t*nB*nf:t*nB*nf+b.NPad*nf], b.LikMask[s*b.NPad*nf:(s+1)*b.NPad*nf])
	}
	if b.Z != nil {
		out.Z = lay(b.Z, 1, 1, 1, 1)
	}
	return p, nil
}

func pow(b, k int) int {
	r := 1
	for range k {
		r *= b
	}
	return r
}
