//go:build amd64 && !purego

#include "textflag.h"

// func prefetchBinsAsm(tab *float64, xs *float64, n int, lo, invH float64, last, size int)
//
// For each of the n values x at xs, PREFETCHT0 of the bytes at
// tab + min(uint(int((x−lo)·invH)), last)·size: binIndex's bin, so a
// value outside [lo, hi) or NaN asks for the last bin, never past it.
TEXT ·prefetchBinsAsm(SB), NOSPLIT, $0-56
	MOVQ  tab+0(FP), DI
	MOVQ  xs+8(FP), SI
	MOVQ  n+16(FP), CX
	MOVSD lo+24(FP), X1
	MOVSD invH+32(FP), X2
	MOVQ  last+40(FP), R8
	MOVQ  size+48(FP), R9
	XORQ  DX, DX

loop:
	CMPQ       DX, CX
	JGE        done
	MOVSD      (SI)(DX*8), X0
	SUBSD      X1, X0
	MULSD      X2, X0
	CVTTSD2SQ  X0, AX
	CMPQ       AX, R8
	CMOVQHI    R8, AX
	IMULQ      R9, AX
	PREFETCHT0 (DI)(AX*1)
	INCQ       DX
	JMP        loop

done:
	RET


// func projectPairAVX2(z *float64, n, d int, u, v *float64, c, e float64, xs, ys *float64)
//
// projectRowsPair on n rows (n a multiple of 4) of d coordinates (d a
// multiple of 4), four rows at a time, one row per lane: each 4×4 block
// of the rows transposed into columns, then for each coordinate i in
// order acc += column_i · u_i, with VMULPD and VADDPD — a lane's sums are
// projectRows' scalar ones, in the same order, so the same bits.
TEXT ·projectPairAVX2(SB), NOSPLIT, $0-72
	MOVQ         z+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         d+16(FP), R8
	MOVQ         u+24(FP), R9
	MOVQ         v+32(FP), R10
	VBROADCASTSD c+40(FP), Y14
	VBROADCASTSD e+48(FP), Y15
	MOVQ         xs+56(FP), DI
	MOVQ         ys+64(FP), R11
	MOVQ         R8, R12
	SHLQ         $3, R12 // bytes per row
	XORQ         DX, DX  // atom

pp4:
	CMPQ   DX, CX
	JGE    ppdone
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	MOVQ   SI, AX // row 0 of the four, column block k
	XORQ   BX, BX // k

ppk:
	CMPQ       BX, R8
	JGE        ppstore
	VMOVUPD    (AX), Y0
	VMOVUPD    (AX)(R12*1), Y1
	LEAQ       (AX)(R12*2), R13
	VMOVUPD    (R13), Y2
	VMOVUPD    (R13)(R12*1), Y3
	VUNPCKLPD  Y1, Y0, Y4
	VUNPCKHPD  Y1, Y0, Y5
	VUNPCKLPD  Y3, Y2, Y6
	VUNPCKHPD  Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0 // column k
	VPERM2F128 $0x20, Y7, Y5, Y1 // column k+1
	VPERM2F128 $0x31, Y6, Y4, Y2 // column k+2
	VPERM2F128 $0x31, Y7, Y5, Y3 // column k+3
	VBROADCASTSD (R9)(BX*8), Y10
	VMULPD     Y10, Y0, Y10
	VADDPD     Y10, Y8, Y8
	VBROADCASTSD (R10)(BX*8), Y11
	VMULPD     Y11, Y0, Y11
	VADDPD     Y11, Y9, Y9
	VBROADCASTSD 8(R9)(BX*8), Y10
	VMULPD     Y10, Y1, Y10
	VADDPD     Y10, Y8, Y8
	VBROADCASTSD 8(R10)(BX*8), Y11
	VMULPD     Y11, Y1, Y11
	VADDPD     Y11, Y9, Y9
	VBROADCASTSD 16(R9)(BX*8), Y10
	VMULPD     Y10, Y2, Y10
	VADDPD     Y10, Y8, Y8
	VBROADCASTSD 16(R10)(BX*8), Y11
	VMULPD     Y11, Y2, Y11
	VADDPD     Y11, Y9, Y9
	VBROADCASTSD 24(R9)(BX*8), Y10
	VMULPD     Y10, Y3, Y10
	VADDPD     Y10, Y8, Y8
	VBROADCASTSD 24(R10)(BX*8), Y11
	VMULPD     Y11, Y3, Y11
	VADDPD     Y11, Y9, Y9
	ADDQ       $32, AX
	ADDQ       $4, BX
	JMP        ppk

ppstore:
	VSUBPD  Y14, Y8, Y8
	VSUBPD  Y15, Y9, Y9
	VMOVUPD Y8, (DI)(DX*8)
	VMOVUPD Y9, (R11)(DX*8)
	LEAQ    (SI)(R12*4), SI
	ADDQ    $4, DX
	JMP     pp4

ppdone:
	VZEROUPPER
	RET

// func binPairAVX(tab, xs, ws, vs *float64, j, n int, lo, hi, invH float64, acc *float64, ahead, last int) int
//
// binBoth from atom j up to n or the first atom outside [lo, hi), whose
// index it returns: for each atom x of masses w and v, the bin's entry
// [w, w·x, v, v·x] (of bin min(uint(int((x−lo)·invH)), last), as
// binIndex) is added with one 32-byte load, VADDPD and store, and
// acc's [Σ w·x·x, Σ v·x·x] with one VADDPD. Each lane's products and sums
// are binBoth's scalar ones in the same order, so the same bits; what
// changes is one store an atom instead of four: scattered stores retire
// in order, and four a bin filled the store queue. ahead > 0 asks the
// cache for the bin of the atom that far ahead.
TEXT ·binPairAVX(SB), NOSPLIT, $0-104
	MOVQ         tab+0(FP), DI
	MOVQ         xs+8(FP), SI
	MOVQ         ws+16(FP), R8
	MOVQ         vs+24(FP), R9
	MOVQ         j+32(FP), DX
	MOVQ         n+40(FP), CX
	VMOVSD       lo+48(FP), X13
	VMOVSD       hi+56(FP), X14
	VMOVSD       invH+64(FP), X15
	MOVQ         acc+72(FP), R11
	VMOVUPD      (R11), X12
	MOVQ         ahead+80(FP), R12
	MOVQ         last+88(FP), R10

bp:
	CMPQ       DX, CX
	JGE        bpdone
	TESTQ      R12, R12
	JZ         bpnopf
	LEAQ       (DX)(R12*1), BX
	CMPQ       BX, CX
	JGE        bpnopf
	VMOVSD     (SI)(BX*8), X7
	VSUBSD     X13, X7, X7
	VMULSD     X15, X7, X7
	VCVTTSD2SIQ X7, BX
	CMPQ       BX, R10
	CMOVQHI    R10, BX
	SHLQ       $5, BX
	PREFETCHT0 (DI)(BX*1)

bpnopf:
	VMOVSD      (SI)(DX*8), X0
	VUCOMISD    X13, X0
	JB          bpdone
	VUCOMISD    X0, X14
	JBE         bpdone
	VMOVSD      (R8)(DX*8), X1
	VMOVHPD     (R9)(DX*8), X1, X1 // [w, v]
	VMOVDDUP    X0, X2             // [x, x]
	VMULPD      X2, X1, X3         // [w·x, v·x]
	VMULPD      X2, X3, X4         // [w·x·x, v·x·x]
	VADDPD      X4, X12, X12
	VUNPCKLPD   X3, X1, X5         // [w, w·x]
	VUNPCKHPD   X3, X1, X6         // [v, v·x]
	VINSERTF128 $1, X6, Y5, Y5
	VSUBSD      X13, X0, X0
	VMULSD      X15, X0, X0
	VCVTTSD2SIQ X0, AX
	CMPQ        AX, R10
	CMOVQHI     R10, AX
	SHLQ        $5, AX
	VADDPD      (DI)(AX*1), Y5, Y5
	VMOVUPD     Y5, (DI)(AX*1)
	INCQ        DX
	JMP         bp

bpdone:
	VMOVUPD X12, (R11)
	VZEROUPPER
	MOVQ    DX, ret+96(FP)
	RET

// func binOneAVX(tab, xs, ws *float64, j, n int, lo, hi, invH float64, acc *float64, ahead, last, stride int) int
//
// binWeighted as binPairAVX does binBoth: bin k's [w, w·x], stride bytes
// apart in tab, added with one 16-byte load, VADDPD and store, and
// acc's Σ w·x·x with VADDSD, in binWeighted's order, so the same bits.
TEXT ·binOneAVX(SB), NOSPLIT, $0-104
	MOVQ    tab+0(FP), DI
	MOVQ    xs+8(FP), SI
	MOVQ    ws+16(FP), R8
	MOVQ    j+24(FP), DX
	MOVQ    n+32(FP), CX
	VMOVSD  lo+40(FP), X13
	VMOVSD  hi+48(FP), X14
	VMOVSD  invH+56(FP), X15
	MOVQ    acc+64(FP), R11
	VMOVSD  (R11), X12
	MOVQ    ahead+72(FP), R12
	MOVQ    last+80(FP), R10
	MOVQ    stride+88(FP), R9

b1:
	CMPQ       DX, CX
	JGE        b1done
	TESTQ      R12, R12
	JZ         b1nopf
	LEAQ       (DX)(R12*1), BX
	CMPQ       BX, CX
	JGE        b1nopf
	VMOVSD     (SI)(BX*8), X7
	VSUBSD     X13, X7, X7
	VMULSD     X15, X7, X7
	VCVTTSD2SIQ X7, BX
	CMPQ       BX, R10
	CMOVQHI    R10, BX
	IMULQ      R9, BX
	PREFETCHT0 (DI)(BX*1)

b1nopf:
	VMOVSD      (SI)(DX*8), X0
	VUCOMISD    X13, X0
	JB          b1done
	VUCOMISD    X0, X14
	JBE         b1done
	VMOVSD      (R8)(DX*8), X1
	VMULSD      X0, X1, X3         // w·x
	VMULSD      X0, X3, X4         // w·x·x
	VADDSD      X4, X12, X12
	VUNPCKLPD   X3, X1, X5         // [w, w·x]
	VSUBSD      X13, X0, X0
	VMULSD      X15, X0, X0
	VCVTTSD2SIQ X0, AX
	CMPQ        AX, R10
	CMOVQHI     R10, AX
	IMULQ       R9, AX
	VADDPD      (DI)(AX*1), X5, X5
	VMOVUPD     X5, (DI)(AX*1)
	INCQ        DX
	JMP         b1

b1done:
	VMOVSD X12, (R11)
	MOVQ   DX, ret+96(FP)
	RET
