//go:build arm64 && !purego

#include "textflag.h"

// func prefetchBinsAsm(tab *float64, xs *float64, n int, lo, invH float64, last, size int)
//
// PRFM PLDL1KEEP of tab + min(uint(int((x−lo)·invH)), last)·size for
// each of the n values x at xs, as sw2kernels_amd64.s.
TEXT ·prefetchBinsAsm(SB), NOSPLIT, $0-56
	MOVD  tab+0(FP), R0
	MOVD  xs+8(FP), R1
	MOVD  n+16(FP), R2
	FMOVD lo+24(FP), F1
	FMOVD invH+32(FP), F2
	MOVD  last+40(FP), R3
	MOVD  size+48(FP), R4

loop:
	CBZ     R2, done
	FMOVD.P 8(R1), F0
	FSUBD   F1, F0, F0
	FMULD   F2, F0, F0
	FCVTZSD F0, R5
	CMP     R3, R5
	CSEL    HI, R3, R5, R5
	MUL     R4, R5, R5
	ADD     R0, R5, R6
	PRFM    (R6), PLDL1KEEP
	SUB     $1, R2, R2
	B       loop

done:
	RET

