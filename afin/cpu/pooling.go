package cpu

import (
	"context"

	"github.com/afin-bench/afin/afin/arch"
)

// The paper's Pooling (Sec. 4.2, App. B.2 "Pooling"): the sum over
// factors, forward (pooling) and backward (poolingBackward).

// pooling sums the tokens over factors (the prior included) and
// symmetrises the pair sum (App. B.2, "Pooling"), looking at ctx every
// BoxMLP chunk of tokens.
func (n *Net) pooling(ctx context.Context, w *workspace, K, d int) error {
	c := n.cfg.C
	w.poolX, w.poolP = grow(w.poolX, d*c), grow(w.poolP, d*d*c)
	clear(w.poolX)
	clear(w.poolP)
	tc := tokensPerChunk(d)
	for k := 0; k < K; k++ {
		if k%tc == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		addTo(w.poolX, w.x[k*d*c:(k+1)*d*c])
		addTo(w.poolP, w.p[k*d*d*c:(k+1)*d*d*c])
	}
	symInPlace(w.poolP, d, c)
	return nil
}

// poolingBackward hands the gradients of Ē (dPool d×d×C, symmetrised
// here in place as the forward symmetrised the pair sum; dXPool d×C) to
// every token, in s.gP and s.gX.
func (n *Net) poolingBackward(s *trainState, dPool, dXPool []float32, K, d int) {
	c := n.cfg.C
	s.gP, s.gX = grow(s.gP, K*d*d*c), grow(s.gX, K*d*c)
	symInPlace(dPool, d, c)
	for k := 0; k < K; k++ {
		copy(s.gP[k*d*d*c:(k+1)*d*d*c], dPool)
		copy(s.gX[k*d*c:(k+1)*d*c], dXPool)
	}
}

// poolingWorkspaceFloats is the pooled tokens: d node and d² pair tokens.
func poolingWorkspaceFloats(cfg arch.Config, d int) int64 {
	dd := int64(d)
	return (dd + dd*dd) * int64(cfg.C)
}
