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

