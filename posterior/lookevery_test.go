package posterior

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/internal/countctx"
)

// LookEvery keeps ~2¹⁶ flops of d² draws between looks, and at least one
// draw.
func TestLookEvery(t *testing.T) {
	for _, tc := range []struct{ d, want int }{{0, 65536}, {1, 65536}, {8, 1024}, {64, 16}, {256, 1}, {4096, 1}} {
		if got := LookEvery(tc.d); got != tc.want {
			t.Errorf("LookEvery(%d) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

// DrawsOfContext stops at the first look after a cancel, and otherwise
// returns what DrawsOf does.
func TestDrawsOfContextCancel(t *testing.T) {
	d := 300 // one look per draw
	g := &Gaussian{Mean: make([]float64, d), L: make([]float64, d*d)}
	for i := 0; i < d; i++ {
		g.L[i*d+i] = 1
	}
	want, _ := DrawsOf(g, rand.New(rand.NewPCG(1, 2)), 10)
	got, _, err := DrawsOfContext(context.Background(), g, rand.New(rand.NewPCG(1, 2)), 10)
	if err != nil || len(got.Z) != len(want.Z) || got.Z[len(got.Z)-1] != want.Z[len(want.Z)-1] {
		t.Fatalf("uncancelled: err %v, draws differ from DrawsOf's", err)
	}
	ctx := countctx.CancelAt(4)
	defer ctx.Stop()
	if _, _, err := DrawsOfContext(ctx, g, rand.New(rand.NewPCG(1, 2)), 10); !errors.Is(err, context.Canceled) || ctx.Calls() != 4 {
		t.Errorf("cancel at look 4: err %v after %d looks, want context.Canceled after 4", err, ctx.Calls())
	}
}
