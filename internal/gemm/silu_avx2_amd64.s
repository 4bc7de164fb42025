//go:build amd64 && !purego

#include "textflag.h"

// The AVX2 counterparts of silu_amd64.s: the same exp(u) = 2^n·p(r)
// (constants expc<> there), eight lanes at a time. AVX2 has neither
// VSCALEFPS nor masks: 2^n is built in the exponent field, in two halves
// so n = −127 (u near −88) stays a normal float; the Go wrappers handle
// the last len%8 elements.

DATA e127<>+0(SB)/4, $127
DATA e127<>+4(SB)/4, $127
DATA e127<>+8(SB)/4, $127
DATA e127<>+12(SB)/4, $127
DATA e127<>+16(SB)/4, $127
DATA e127<>+20(SB)/4, $127
DATA e127<>+24(SB)/4, $127
DATA e127<>+28(SB)/4, $127
GLOBL e127<>(SB), RODATA|NOPTR, $32

#define LOADCONST2 \
	VBROADCASTSS expc2<>+0(SB), Y15 \
	VBROADCASTSS expc2<>+4(SB), Y14 \
	VBROADCASTSS expc2<>+8(SB), Y13 \
	VBROADCASTSS expc2<>+12(SB), Y12 \
	VBROADCASTSS expc2<>+16(SB), Y11 \
	VBROADCASTSS expc2<>+20(SB), Y10 \
	VBROADCASTSS expc2<>+24(SB), Y9 \
	VBROADCASTSS expc2<>+28(SB), Y8 \
	VBROADCASTSS expc2<>+32(SB), Y7 \
	VBROADCASTSS expc2<>+36(SB), Y6 \
	VBROADCASTSS expc2<>+40(SB), Y5

DATA expc2<>+0(SB)/4, $0x3fb8aa3b  // log2(e)
DATA expc2<>+4(SB)/4, $0x3f318000  // ln2 high part
DATA expc2<>+8(SB)/4, $0xb95e8083  // ln2 low part
DATA expc2<>+12(SB)/4, $0x3f800000 // 1
DATA expc2<>+16(SB)/4, $0x3f000000 // 1/2
DATA expc2<>+20(SB)/4, $0x3e2aaaab // 1/6
DATA expc2<>+24(SB)/4, $0x3d2aaaab // 1/24
DATA expc2<>+28(SB)/4, $0x3c088889 // 1/120
DATA expc2<>+32(SB)/4, $0x3ab60b61 // 1/720
DATA expc2<>+36(SB)/4, $0x42b00000 // 88
DATA expc2<>+40(SB)/4, $0xc2b00000 // -88
GLOBL expc2<>(SB), RODATA|NOPTR, $44

// EXP2 sets Y3 = exp(Y1) for Y1 clamped to [-88, 88]; clobbers Y1, Y2, Y4.
#define EXP2 \
	VMINPS Y6, Y1, Y1 \
	VMAXPS Y5, Y1, Y1 \
	VMULPS Y15, Y1, Y2 \
	VROUNDPS $0, Y2, Y2 \
	VFNMADD231PS Y14, Y2, Y1 \
	VFNMADD231PS Y13, Y2, Y1 \
	VMOVAPS Y7, Y3 \
	VFMADD213PS Y8, Y1, Y3 \
	VFMADD213PS Y9, Y1, Y3 \
	VFMADD213PS Y10, Y1, Y3 \
	VFMADD213PS Y11, Y1, Y3 \
	VFMADD213PS Y12, Y1, Y3 \
	VFMADD213PS Y12, Y1, Y3 \
	VCVTPS2DQ Y2, Y2 \
	VPSRAD $1, Y2, Y4 \
	VPSUBD Y4, Y2, Y2 \
	VPADDD e127<>(SB), Y4, Y4 \
	VPSLLD $23, Y4, Y4 \
	VMULPS Y4, Y3, Y3 \
	VPADDD e127<>(SB), Y2, Y2 \
	VPSLLD $23, Y2, Y2 \
	VMULPS Y2, Y3, Y3

// SILU2 replaces Y0 by Y0/(1+exp(-Y0)), using Y1–Y4.
#define SILU2 \
	VXORPS Y1, Y1, Y1 \
	VSUBPS Y0, Y1, Y1 \
	EXP2 \
	VADDPS Y12, Y3, Y3 \
	VDIVPS Y3, Y0, Y0

// func siluAVX2(x *float32, n int)
TEXT ·siluAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $3, CX
	JZ done
	LOADCONST2
loop:
	VMOVUPS (DI), Y0
	SILU2
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JNZ loop
done:
	VZEROUPPER
	RET

// func addSiLUAVX2(dst, a, b *float32, n int)
TEXT ·addSiLUAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ done
	LOADCONST2
loop:
	VMOVUPS (DI), Y0
	VADDPS (SI), Y0, Y0
	VADDPS (DX), Y0, Y0
	SILU2
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	DECQ CX
	JNZ loop
done:
	VZEROUPPER
	RET

// func expSumAVX2(x *float32, n int, m float32) float32
TEXT ·expSumAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VXORPS Y0, Y0, Y0
	SHRQ $3, CX
	JZ reduce
	LOADCONST2
loop:
	VBROADCASTSS m+16(FP), Y1
	VMOVUPS (DI), Y2
	VSUBPS Y1, Y2, Y1
	EXP2
	VMOVUPS Y3, (DI)
	VADDPS Y3, Y0, Y0
	ADDQ $32, DI
	DECQ CX
	JNZ loop
reduce:
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0x4E, X0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VADDPS X1, X0, X0
	MOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func siluGradAVX2(dz, da, z *float32, n int)
TEXT ·siluGradAVX2(SB), NOSPLIT, $0-32
	MOVQ dz+0(FP), DI
	MOVQ da+8(FP), SI
	MOVQ z+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ done
	LOADCONST2
loop:
	VMOVUPS (DX), Y0
	VXORPS Y1, Y1, Y1
	VSUBPS Y0, Y1, Y1
	EXP2
	VADDPS Y12, Y3, Y3
	VDIVPS Y3, Y12, Y4
	VSUBPS Y4, Y12, Y2
	VFMADD213PS Y12, Y0, Y2
	VMULPS Y4, Y2, Y2
	VMULPS (SI), Y2, Y2
	VMOVUPS Y2, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	DECQ CX
	JNZ loop
done:
	VZEROUPPER
	RET
