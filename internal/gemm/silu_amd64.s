//go:build amd64 && !purego

#include "textflag.h"

// Constants of exp(u) = 2^n·p(r), u = n·ln2 + r, |r| ≤ ln2/2, with p the
// degree-6 Taylor polynomial (relative error ≈ 1e-7 on that interval);
// ln2 is split in two so r is exact to float32 rounding.
DATA expc<>+0(SB)/4, $0x3fb8aa3b  // log2(e)
DATA expc<>+4(SB)/4, $0x3f318000  // ln2 high part
DATA expc<>+8(SB)/4, $0xb95e8083  // ln2 low part
DATA expc<>+12(SB)/4, $0x3f800000 // 1
DATA expc<>+16(SB)/4, $0x3f000000 // 1/2
DATA expc<>+20(SB)/4, $0x3e2aaaab // 1/6
DATA expc<>+24(SB)/4, $0x3d2aaaab // 1/24
DATA expc<>+28(SB)/4, $0x3c088889 // 1/120
DATA expc<>+32(SB)/4, $0x3ab60b61 // 1/720
DATA expc<>+36(SB)/4, $0x42b00000 // 88: |u| clamp, exp(88) is near float32's max
DATA expc<>+40(SB)/4, $0xc2b00000 // -88
GLOBL expc<>(SB), RODATA|NOPTR, $44

#define LOADCONST \
	VBROADCASTSS expc<>+0(SB), Z16 \
	VBROADCASTSS expc<>+4(SB), Z17 \
	VBROADCASTSS expc<>+8(SB), Z18 \
	VBROADCASTSS expc<>+12(SB), Z19 \
	VBROADCASTSS expc<>+16(SB), Z20 \
	VBROADCASTSS expc<>+20(SB), Z21 \
	VBROADCASTSS expc<>+24(SB), Z22 \
	VBROADCASTSS expc<>+28(SB), Z23 \
	VBROADCASTSS expc<>+32(SB), Z24 \
	VBROADCASTSS expc<>+36(SB), Z25 \
	VBROADCASTSS expc<>+40(SB), Z26 \
	VPXORD Z27, Z27, Z27

// EXP sets Z3 = exp(Z1) for Z1 clamped to [-88, 88]; clobbers Z1, Z2.
#define EXP \
	VMINPS Z25, Z1, Z1 \
	VMAXPS Z26, Z1, Z1 \
	VMULPS Z16, Z1, Z2 \
	VRNDSCALEPS $0, Z2, Z2 \
	VFNMADD231PS Z17, Z2, Z1 \
	VFNMADD231PS Z18, Z2, Z1 \
	VMOVAPS Z24, Z3 \
	VFMADD213PS Z23, Z1, Z3 \
	VFMADD213PS Z22, Z1, Z3 \
	VFMADD213PS Z21, Z1, Z3 \
	VFMADD213PS Z20, Z1, Z3 \
	VFMADD213PS Z19, Z1, Z3 \
	VFMADD213PS Z19, Z1, Z3 \
	VSCALEFPS Z2, Z3, Z3

// SILU replaces Z0 by Z0/(1+exp(-Z0)), using Z1–Z3.
#define SILU \
	VSUBPS Z0, Z27, Z1 \
	EXP \
	VADDPS Z19, Z3, Z3 \
	VDIVPS Z3, Z0, Z0

// func siluAVX512(x *float32, n int)
TEXT ·siluAVX512(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	LOADCONST
	CMPQ CX, $16
	JLT tail
loop:
	VMOVUPS (DI), Z0
	SILU
	VMOVUPS Z0, (DI)
	ADDQ $64, DI
	SUBQ $16, CX
	CMPQ CX, $16
	JGE loop
tail:
	TESTQ CX, CX
	JZ done
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K1
	VMOVUPS.Z (DI), K1, Z0
	SILU
	VMOVUPS Z0, K1, (DI)
done:
	VZEROUPPER
	RET

// func addSiLUAVX512(dst, a, b *float32, n int)
TEXT ·addSiLUAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	LOADCONST
	CMPQ CX, $16
	JLT tail
loop:
	VMOVUPS (DI), Z0
	VADDPS (SI), Z0, Z0
	VADDPS (DX), Z0, Z0
	SILU
	VMOVUPS Z0, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	SUBQ $16, CX
	CMPQ CX, $16
	JGE loop
tail:
	TESTQ CX, CX
	JZ done
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K1
	VMOVUPS.Z (DI), K1, Z0
	VMOVUPS.Z (SI), K1, Z4
	VMOVUPS.Z (DX), K1, Z5
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z0, Z0
	SILU
	VMOVUPS Z0, K1, (DI)
done:
	VZEROUPPER
	RET

// func expSumAVX512(x *float32, n int, m float32) float32
TEXT ·expSumAVX512(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	LOADCONST
	VBROADCASTSS m+16(FP), Z7
	VPXORD Z5, Z5, Z5
	CMPQ CX, $16
	JLT tail
loop:
	VMOVUPS (DI), Z0
	VSUBPS Z7, Z0, Z1
	EXP
	VMOVUPS Z3, (DI)
	VADDPS Z3, Z5, Z5
	ADDQ $64, DI
	SUBQ $16, CX
	CMPQ CX, $16
	JGE loop
tail:
	TESTQ CX, CX
	JZ reduce
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K1
	VMOVUPS.Z (DI), K1, Z0
	VSUBPS Z7, Z0, Z1
	EXP
	VMOVUPS Z3, K1, (DI)
	VADDPS Z3, Z5, K1, Z5
reduce:
	VEXTRACTF32X8 $1, Z5, Y6
	VADDPS Y6, Y5, Y5
	VEXTRACTF128 $1, Y5, X6
	VADDPS X6, X5, X5
	VPERMILPS $0x4E, X5, X6
	VADDPS X6, X5, X5
	VPERMILPS $0xB1, X5, X6
	VADDPS X6, X5, X5
	MOVSS X5, ret+24(FP)
	VZEROUPPER
	RET

// SILUGRAD sets Z5 = SiLU'(Z0) = s·(1 + Z0·(1 − s)), s = σ(Z0); uses Z1–Z5.
#define SILUGRAD \
	VSUBPS Z0, Z27, Z1 \
	EXP \
	VADDPS Z19, Z3, Z3 \
	VDIVPS Z3, Z19, Z4 \
	VSUBPS Z4, Z19, Z5 \
	VFMADD213PS Z19, Z0, Z5 \
	VMULPS Z4, Z5, Z5

// func siluGradAVX512(dz, da, z *float32, n int)
TEXT ·siluGradAVX512(SB), NOSPLIT, $0-32
	MOVQ dz+0(FP), DI
	MOVQ da+8(FP), SI
	MOVQ z+16(FP), DX
	MOVQ n+24(FP), CX
	LOADCONST
	CMPQ CX, $16
	JLT tail
loop:
	VMOVUPS (DX), Z0
	SILUGRAD
	VMULPS (SI), Z5, Z5
	VMOVUPS Z5, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	ADDQ $64, DX
	SUBQ $16, CX
	CMPQ CX, $16
	JGE loop
tail:
	TESTQ CX, CX
	JZ done
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K1
	VMOVUPS.Z (DX), K1, Z0
	VMOVUPS.Z (SI), K1, Z6
	SILUGRAD
	VMULPS Z6, Z5, Z5
	VMOVUPS Z5, K1, (DI)
done:
	VZEROUPPER
	RET
