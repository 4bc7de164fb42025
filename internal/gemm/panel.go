package gemm

import "sync"

// This file holds the driver shared by the kernels that compute one
// 16-column panel at a time (AVX2, NEON and portable Go), and the
// portable Go kernel itself.

// panelMR is the most rows a panel kernel computes per call.
const panelMR = 6

// panelKernel computes mr ≤ panelMR rows of one full panel, as panelFunc,
// on slices that start at the first element each touches; bias is nil
// when there is none.
type panelKernel func(mr int, a []float32, lda int, b []float32, bstride, k int, c []float32, ldc int, bias []float32, acc bool)

// tiles hold the partial last panel of mulPanels. A tile on the stack
// would escape (the kernel is called through a func value) and cost an
// allocation per call; pooled, the steady state allocates nothing.
var tiles = sync.Pool{New: func() any { return new([panelMR * 16]float32) }}

// mulPanels is Mul through a panel kernel: 48-row blocks (so SiLU finds
// them in L1), within them one 16-column panel at a time over all rows of
// the block, so the panel stays in L1. The last panel of a matrix whose
// width is not a multiple of 16 is computed into a tile on the stack and
// its valid columns copied out, since these kernels store whole panels.
func (p *Packed) mulPanels(kern panelKernel, silu func([]float32), c []float32, ldc int, a []float32, lda, m int, op Op) {
	acc := op&Accumulate != 0
	var tile *[panelMR * 16]float32 // from tiles, on the first partial panel
	defer func() {
		if tile != nil {
			tiles.Put(tile)
		}
	}()
	for i0 := 0; i0 < m; i0 += rowBlock {
		rb := min(rowBlock, m-i0)
		for gi := range p.groups {
			g := &p.groups[gi]
			bstride := 16 * g.np
			for pi := 0; pi < g.np; pi++ {
				col := g.col + 16*pi
				b := p.data[g.off+16*pi:]
				var bias []float32
				if op&WithBias != 0 && p.pbias != nil {
					bias = p.pbias[col : col+16]
				}
				valid := min(16, p.N-col)
				for r := 0; r < rb; r += panelMR {
					mr := min(panelMR, rb-r)
					row := i0 + r
					if valid == 16 {
						kern(mr, a[row*lda:], lda, b, bstride, p.K, c[row*ldc+col:], ldc, bias, acc)
						continue
					}
					if tile == nil {
						tile = tiles.Get().(*[panelMR * 16]float32)
					}
					kern(mr, a[row*lda:], lda, b, bstride, p.K, tile[:], 16, bias, false)
					for rr := 0; rr < mr; rr++ {
						dst := c[(row+rr)*ldc+col : (row+rr)*ldc+col+valid]
						src := tile[rr*16 : rr*16+valid]
						if acc {
							for j, v := range src {
								dst[j] += v
							}
						} else {
							copy(dst, src)
						}
					}
				}
			}
		}
		if op&ApplySiLU != 0 {
			for r := i0; r < i0+rb; r++ {
				silu(c[r*ldc : r*ldc+p.N])
			}
		}
	}
}

// goPanel is the portable panel kernel: 4×4 register tiles of scalar
// accumulators (rows × columns), so each loaded A and B value feeds four
// multiply-adds, with every slice cut to its length before the k loop so
// the loop body has no bounds checks.
func goPanel(mr int, a []float32, lda int, b []float32, bstride, k int, c []float32, ldc int, bias []float32, acc bool) {
	r := 0
	for ; r+4 <= mr; r += 4 {
		a0 := a[r*lda : r*lda+k]
		a1 := a[(r+1)*lda : (r+1)*lda+k][:len(a0)]
		a2 := a[(r+2)*lda : (r+2)*lda+k][:len(a0)]
		a3 := a[(r+3)*lda : (r+3)*lda+k][:len(a0)]
		for j := 0; j < 16; j += 4 {
			var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 float32
			o := j
			for kk := range a0 {
				bk := b[o : o+4 : o+4]
				o += bstride
				b0, b1, b2, b3 := bk[0], bk[1], bk[2], bk[3]
				x := a0[kk]
				c00, c01, c02, c03 = c00+x*b0, c01+x*b1, c02+x*b2, c03+x*b3
				x = a1[kk]
				c10, c11, c12, c13 = c10+x*b0, c11+x*b1, c12+x*b2, c13+x*b3
				x = a2[kk]
				c20, c21, c22, c23 = c20+x*b0, c21+x*b1, c22+x*b2, c23+x*b3
				x = a3[kk]
				c30, c31, c32, c33 = c30+x*b0, c31+x*b1, c32+x*b2, c33+x*b3
			}
			storeQuad(c[r*ldc+j:], bias, j, acc, c00, c01, c02, c03)
			storeQuad(c[(r+1)*ldc+j:], bias, j, acc, c10, c11, c12, c13)
			storeQuad(c[(r+2)*ldc+j:], bias, j, acc, c20, c21, c22, c23)
			storeQuad(c[(r+3)*ldc+j:], bias, j, acc, c30, c31, c32, c33)
		}
	}
	for ; r < mr; r++ {
		ar := a[r*lda : r*lda+k]
		for j := 0; j < 16; j += 4 {
			var c0, c1, c2, c3 float32
			o := j
			for _, x := range ar {
				bk := b[o : o+4 : o+4]
				o += bstride
				c0, c1, c2, c3 = c0+x*bk[0], c1+x*bk[1], c2+x*bk[2], c3+x*bk[3]
			}
			storeQuad(c[r*ldc+j:], bias, j, acc, c0, c1, c2, c3)
		}
	}
}

// storeQuad writes four accumulators to c[0:4], adding bias[j:j+4] (when
// bias is not nil) and the previous values (when acc).
func storeQuad(c, bias []float32, j int, acc bool, v0, v1, v2, v3 float32) {
	c = c[:4]
	if bias != nil {
		bq := bias[j : j+4]
		v0, v1, v2, v3 = v0+bq[0], v1+bq[1], v2+bq[2], v3+bq[3]
	}
	if acc {
		v0, v1, v2, v3 = v0+c[0], v1+c[1], v2+c[2], v3+c[3]
	}
	c[0], c[1], c[2], c[3] = v0, v1, v2, v3
}
