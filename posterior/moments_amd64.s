//go:build amd64 && !purego

#include "textflag.h"

// func addCovAVX(c *float64, dim int, r0, r1, r2, r3, w *float64)
//
// momentBlock.addCov for a full block: for each row i of c's lower
// triangle, a_k = w[k]·r_k[i] and then, for each j ≤ i,
// c[i][j] = c[i][j] + a0·r0[j] + a1·r1[j] + a2·r2[j] + a3·r3[j], in that
// order — four entries to a register, the rest one at a time — so each
// entry is the Go loop's, to the bit.
TEXT ·addCovAVX(SB), NOSPLIT, $0-56
	MOVQ c+0(FP), DI
	MOVQ dim+8(FP), CX
	MOVQ r0+16(FP), R8
	MOVQ r1+24(FP), R9
	MOVQ r2+32(FP), R10
	MOVQ r3+40(FP), R11
	MOVQ w+48(FP), SI
	MOVQ CX, R12
	SHLQ $3, R12 // bytes per row of c
	MOVQ DI, AX  // row i of c
	XORQ BX, BX  // i

ci:
	CMPQ         BX, CX
	JGE          cdone
	VMOVSD       (SI), X0
	VMULSD       (R8)(BX*8), X0, X0
	VBROADCASTSD X0, Y0
	VMOVSD       8(SI), X1
	VMULSD       (R9)(BX*8), X1, X1
	VBROADCASTSD X1, Y1
	VMOVSD       16(SI), X2
	VMULSD       (R10)(BX*8), X2, X2
	VBROADCASTSD X2, Y2
	VMOVSD       24(SI), X3
	VMULSD       (R11)(BX*8), X3, X3
	VBROADCASTSD X3, Y3
	LEAQ         -2(BX), R13 // j+4 ≤ i+1 while j < i−2
	XORQ         DX, DX      // j

cj4:
	CMPQ    DX, R13
	JGE     cj1
	VMOVUPD (AX)(DX*8), Y4
	VMULPD  (R8)(DX*8), Y0, Y5
	VADDPD  Y5, Y4, Y4
	VMULPD  (R9)(DX*8), Y1, Y5
	VADDPD  Y5, Y4, Y4
	VMULPD  (R10)(DX*8), Y2, Y5
	VADDPD  Y5, Y4, Y4
	VMULPD  (R11)(DX*8), Y3, Y5
	VADDPD  Y5, Y4, Y4
	VMOVUPD Y4, (AX)(DX*8)
	ADDQ    $4, DX
	JMP     cj4

cj1:
	CMPQ   DX, BX
	JGT    cnext
	VMOVSD (AX)(DX*8), X4
	VMULSD (R8)(DX*8), X0, X5
	VADDSD X5, X4, X4
	VMULSD (R9)(DX*8), X1, X5
	VADDSD X5, X4, X4
	VMULSD (R10)(DX*8), X2, X5
	VADDSD X5, X4, X4
	VMULSD (R11)(DX*8), X3, X5
	VADDSD X5, X4, X4
	VMOVSD X4, (AX)(DX*8)
	INCQ   DX
	JMP    cj1

cnext:
	ADDQ R12, AX
	INCQ BX
	JMP  ci

cdone:
	VZEROUPPER
	RET
