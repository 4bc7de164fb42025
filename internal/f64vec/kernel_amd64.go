//go:build amd64 && !purego

package f64vec

import "golang.org/x/sys/cpu"

//go:noescape
func expNegAVX2(dst, src *float64, n int)

//go:noescape
func matVecTAVX2(xt, z *float64, d int, eta *float64, stride, n int)

//go:noescape
func logisticAVX2(eta, y, n *float64, ni *int64, m, bits int, acc *Acc)

//go:noescape
func logisticFlatAVX2(eta, y, n *float64, m int, acc *Acc)

//go:noescape
func studentTAVX2(eta, y, invQ *float64, m int, acc *Acc)

//go:noescape
func logisticGradAVX2(eta, y, n *float64, ni *int64, m, bits int, acc *Acc, w *float64)

//go:noescape
func logisticGradFlatAVX2(eta, y, n *float64, m int, acc *Acc, w *float64)

//go:noescape
func studentTGradAVX2(eta, y, invQ *float64, m int, acc *Acc, w *float64)

//go:noescape
func addMatVecAVX2(xt, w *float64, np int, c float64, grad *float64, rows int)

var avx2Impl = &impl{
	name: "avx2",
	expNeg: func(dst, src []float64) {
		v := len(src) &^ 3
		if v > 0 {
			expNegAVX2(&dst[0], &src[0], v)
		}
		expNegGeneric(dst[v:], src[v:])
	},
	matVecT: func(xt, z, eta []float64) {
		v := len(eta) &^ 3
		if v > 0 && len(z) > 0 {
			matVecTAVX2(&xt[0], &z[0], len(z), &eta[0], len(eta), v)
		}
		matVecTCols(xt, z, eta, v)
	},
	logistic: func(eta, y, n []float64, ni []int64, bits int, a *Acc) {
		if v := len(eta) &^ 7; bits == 0 && v > 0 {
			logisticFlatAVX2(&eta[0], &y[0], &n[0], v, a)
			eta, y, n = eta[v:], y[v:], n[v:]
		}
		v := len(eta) &^ 3
		if v > 0 {
			var nip *int64
			if bits > 0 {
				nip = &ni[0]
			}
			logisticAVX2(&eta[0], &y[0], &n[0], nip, v, bits, a)
		}
		if v < len(eta) {
			if bits > 0 {
				ni = ni[v:]
			}
			logisticGeneric(eta[v:], y[v:], n[v:], ni, bits, a)
		}
	},
	studentT: func(eta, y, invQ []float64, a *Acc) {
		v := len(eta) &^ 3
		if v > 0 {
			studentTAVX2(&eta[0], &y[0], &invQ[0], v, a)
		}
		studentTGeneric(eta[v:], y[v:], invQ[v:], a)
	},
	logisticGrad: func(eta, y, n []float64, ni []int64, bits int, a *Acc, w []float64) {
		if v := len(eta) &^ 7; bits == 0 && v > 0 {
			logisticGradFlatAVX2(&eta[0], &y[0], &n[0], v, a, &w[0])
			eta, y, n, w = eta[v:], y[v:], n[v:], w[v:]
		}
		v := len(eta) &^ 3
		if v > 0 {
			var nip *int64
			if bits > 0 {
				nip = &ni[0]
			}
			logisticGradAVX2(&eta[0], &y[0], &n[0], nip, v, bits, a, &w[0])
		}
		if v < len(eta) {
			if bits > 0 {
				ni = ni[v:]
			}
			logisticGradGeneric(eta[v:], y[v:], n[v:], ni, bits, a, w[v:])
		}
	},
	studentTGrad: func(eta, y, invQ []float64, a *Acc, w []float64) {
		v := len(eta) &^ 3
		if v > 0 {
			studentTGradAVX2(&eta[0], &y[0], &invQ[0], v, a, &w[0])
		}
		studentTGradGeneric(eta[v:], y[v:], invQ[v:], a, w[v:])
	},
	addMatVec: func(xt, w []float64, c float64, grad []float64) {
		if np := len(w); np > 0 && np&3 == 0 && len(grad) > 0 {
			addMatVecAVX2(&xt[0], &w[0], np, c, &grad[0], len(grad))
			return
		}
		addMatVecGeneric(xt, w, c, grad)
	},
}

// archImpls: AVX2 with FMA (x86-64-v3).
func archImpls() []*impl {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		return []*impl{avx2Impl}
	}
	return nil
}
