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
