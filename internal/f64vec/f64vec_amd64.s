//go:build amd64 && !purego

#include "textflag.h"

// The AVX2 kernels of generic.go, four float64 lanes per ymm register,
// with the same operations in the same order (the FMAs included), so
// that every kernel but StudentT gives the generic bits; the Go wrappers
// in kernel_amd64.go run the last len%4 sites through the generic code.
// Every constant is stored four times so that it can be a 256-bit
// memory operand.

DATA absmask<>+0(SB)/8, $0x7fffffffffffffff
DATA absmask<>+8(SB)/8, $0x7fffffffffffffff
DATA absmask<>+16(SB)/8, $0x7fffffffffffffff
DATA absmask<>+24(SB)/8, $0x7fffffffffffffff
GLOBL absmask<>(SB), RODATA|NOPTR, $32

DATA signbit<>+0(SB)/8, $0x8000000000000000
DATA signbit<>+8(SB)/8, $0x8000000000000000
DATA signbit<>+16(SB)/8, $0x8000000000000000
DATA signbit<>+24(SB)/8, $0x8000000000000000
GLOBL signbit<>(SB), RODATA|NOPTR, $32

DATA clamp<>+0(SB)/8, $0x4087700000000000
DATA clamp<>+8(SB)/8, $0x4087700000000000
DATA clamp<>+16(SB)/8, $0x4087700000000000
DATA clamp<>+24(SB)/8, $0x4087700000000000
GLOBL clamp<>(SB), RODATA|NOPTR, $32

DATA clampFast<>+0(SB)/8, $0x4086200000000000
DATA clampFast<>+8(SB)/8, $0x4086200000000000
DATA clampFast<>+16(SB)/8, $0x4086200000000000
DATA clampFast<>+24(SB)/8, $0x4086200000000000
GLOBL clampFast<>(SB), RODATA|NOPTR, $32

DATA log2e<>+0(SB)/8, $0x3ff71547652b82fe
DATA log2e<>+8(SB)/8, $0x3ff71547652b82fe
DATA log2e<>+16(SB)/8, $0x3ff71547652b82fe
DATA log2e<>+24(SB)/8, $0x3ff71547652b82fe
GLOBL log2e<>(SB), RODATA|NOPTR, $32

DATA ln2hi<>+0(SB)/8, $0x3fe62e42fefa39ef
DATA ln2hi<>+8(SB)/8, $0x3fe62e42fefa39ef
DATA ln2hi<>+16(SB)/8, $0x3fe62e42fefa39ef
DATA ln2hi<>+24(SB)/8, $0x3fe62e42fefa39ef
GLOBL ln2hi<>(SB), RODATA|NOPTR, $32

DATA ln2lo<>+0(SB)/8, $0x3c7abc9e3b39803f
DATA ln2lo<>+8(SB)/8, $0x3c7abc9e3b39803f
DATA ln2lo<>+16(SB)/8, $0x3c7abc9e3b39803f
DATA ln2lo<>+24(SB)/8, $0x3c7abc9e3b39803f
GLOBL ln2lo<>(SB), RODATA|NOPTR, $32

DATA half<>+0(SB)/8, $0x3fe0000000000000
DATA half<>+8(SB)/8, $0x3fe0000000000000
DATA half<>+16(SB)/8, $0x3fe0000000000000
DATA half<>+24(SB)/8, $0x3fe0000000000000
GLOBL half<>(SB), RODATA|NOPTR, $32

DATA threeHalves<>+0(SB)/8, $0x3ff8000000000000
DATA threeHalves<>+8(SB)/8, $0x3ff8000000000000
DATA threeHalves<>+16(SB)/8, $0x3ff8000000000000
DATA threeHalves<>+24(SB)/8, $0x3ff8000000000000
GLOBL threeHalves<>(SB), RODATA|NOPTR, $32

DATA magic<>+0(SB)/8, $0x4338000000000000
DATA magic<>+8(SB)/8, $0x4338000000000000
DATA magic<>+16(SB)/8, $0x4338000000000000
DATA magic<>+24(SB)/8, $0x4338000000000000
GLOBL magic<>(SB), RODATA|NOPTR, $32

DATA onebits<>+0(SB)/8, $0x3ff0000000000000
DATA onebits<>+8(SB)/8, $0x3ff0000000000000
DATA onebits<>+16(SB)/8, $0x3ff0000000000000
DATA onebits<>+24(SB)/8, $0x3ff0000000000000
GLOBL onebits<>(SB), RODATA|NOPTR, $32

DATA mantmask<>+0(SB)/8, $0x000fffffffffffff
DATA mantmask<>+8(SB)/8, $0x000fffffffffffff
DATA mantmask<>+16(SB)/8, $0x000fffffffffffff
DATA mantmask<>+24(SB)/8, $0x000fffffffffffff
GLOBL mantmask<>(SB), RODATA|NOPTR, $32

DATA bias<>+0(SB)/8, $0x00000000000003ff
DATA bias<>+8(SB)/8, $0x00000000000003ff
DATA bias<>+16(SB)/8, $0x00000000000003ff
DATA bias<>+24(SB)/8, $0x00000000000003ff
GLOBL bias<>(SB), RODATA|NOPTR, $32

DATA bit1<>+0(SB)/8, $0x0000000000000001
DATA bit1<>+8(SB)/8, $0x0000000000000001
DATA bit1<>+16(SB)/8, $0x0000000000000001
DATA bit1<>+24(SB)/8, $0x0000000000000001
GLOBL bit1<>(SB), RODATA|NOPTR, $32

DATA c0<>+0(SB)/8, $0x3ff0000000000000
DATA c0<>+8(SB)/8, $0x3ff0000000000000
DATA c0<>+16(SB)/8, $0x3ff0000000000000
DATA c0<>+24(SB)/8, $0x3ff0000000000000
GLOBL c0<>(SB), RODATA|NOPTR, $32

DATA c1<>+0(SB)/8, $0x3ff0000000000000
DATA c1<>+8(SB)/8, $0x3ff0000000000000
DATA c1<>+16(SB)/8, $0x3ff0000000000000
DATA c1<>+24(SB)/8, $0x3ff0000000000000
GLOBL c1<>(SB), RODATA|NOPTR, $32

DATA c2<>+0(SB)/8, $0x3fe0000000000000
DATA c2<>+8(SB)/8, $0x3fe0000000000000
DATA c2<>+16(SB)/8, $0x3fe0000000000000
DATA c2<>+24(SB)/8, $0x3fe0000000000000
GLOBL c2<>(SB), RODATA|NOPTR, $32

DATA c3<>+0(SB)/8, $0x3fc5555555555555
DATA c3<>+8(SB)/8, $0x3fc5555555555555
DATA c3<>+16(SB)/8, $0x3fc5555555555555
DATA c3<>+24(SB)/8, $0x3fc5555555555555
GLOBL c3<>(SB), RODATA|NOPTR, $32

DATA c4<>+0(SB)/8, $0x3fa5555555555555
DATA c4<>+8(SB)/8, $0x3fa5555555555555
DATA c4<>+16(SB)/8, $0x3fa5555555555555
DATA c4<>+24(SB)/8, $0x3fa5555555555555
GLOBL c4<>(SB), RODATA|NOPTR, $32

DATA c5<>+0(SB)/8, $0x3f81111111111111
DATA c5<>+8(SB)/8, $0x3f81111111111111
DATA c5<>+16(SB)/8, $0x3f81111111111111
DATA c5<>+24(SB)/8, $0x3f81111111111111
GLOBL c5<>(SB), RODATA|NOPTR, $32

DATA c6<>+0(SB)/8, $0x3f56c16c16c16c17
DATA c6<>+8(SB)/8, $0x3f56c16c16c16c17
DATA c6<>+16(SB)/8, $0x3f56c16c16c16c17
DATA c6<>+24(SB)/8, $0x3f56c16c16c16c17
GLOBL c6<>(SB), RODATA|NOPTR, $32

DATA c7<>+0(SB)/8, $0x3f2a01a01a01a01a
DATA c7<>+8(SB)/8, $0x3f2a01a01a01a01a
DATA c7<>+16(SB)/8, $0x3f2a01a01a01a01a
DATA c7<>+24(SB)/8, $0x3f2a01a01a01a01a
GLOBL c7<>(SB), RODATA|NOPTR, $32

DATA c8<>+0(SB)/8, $0x3efa01a01a01a01a
DATA c8<>+8(SB)/8, $0x3efa01a01a01a01a
DATA c8<>+16(SB)/8, $0x3efa01a01a01a01a
DATA c8<>+24(SB)/8, $0x3efa01a01a01a01a
GLOBL c8<>(SB), RODATA|NOPTR, $32

DATA c9<>+0(SB)/8, $0x3ec71de3a556c734
DATA c9<>+8(SB)/8, $0x3ec71de3a556c734
DATA c9<>+16(SB)/8, $0x3ec71de3a556c734
DATA c9<>+24(SB)/8, $0x3ec71de3a556c734
GLOBL c9<>(SB), RODATA|NOPTR, $32

DATA c10<>+0(SB)/8, $0x3e927e4fb7789f5c
DATA c10<>+8(SB)/8, $0x3e927e4fb7789f5c
DATA c10<>+16(SB)/8, $0x3e927e4fb7789f5c
DATA c10<>+24(SB)/8, $0x3e927e4fb7789f5c
GLOBL c10<>(SB), RODATA|NOPTR, $32

DATA c11<>+0(SB)/8, $0x3e5ae64567f544e4
DATA c11<>+8(SB)/8, $0x3e5ae64567f544e4
DATA c11<>+16(SB)/8, $0x3e5ae64567f544e4
DATA c11<>+24(SB)/8, $0x3e5ae64567f544e4
GLOBL c11<>(SB), RODATA|NOPTR, $32

DATA c12<>+0(SB)/8, $0x3e21eed8eff8d898
DATA c12<>+8(SB)/8, $0x3e21eed8eff8d898
DATA c12<>+16(SB)/8, $0x3e21eed8eff8d898
DATA c12<>+24(SB)/8, $0x3e21eed8eff8d898
GLOBL c12<>(SB), RODATA|NOPTR, $32

DATA c13<>+0(SB)/8, $0x3de6124613a86d09
DATA c13<>+8(SB)/8, $0x3de6124613a86d09
DATA c13<>+16(SB)/8, $0x3de6124613a86d09
DATA c13<>+24(SB)/8, $0x3de6124613a86d09
GLOBL c13<>(SB), RODATA|NOPTR, $32

// EXPPOLY takes x ≤ 0 in Y1 and leaves t = x·log₂e + 1.5·2⁵² in Y2
// (k = round(x·log₂e) in its low bits) and p(r) in Y5, r = x − k·ln2;
// it clobbers Y1, Y3, Y4 and Y6. The polynomial's tail T (degree 11) is
// summed as b₀ + r⁴(b₁ + r⁴b₂), each b = cᵢ + cᵢ₊₁r + r²(cᵢ₊₂ + cᵢ₊₃r)
// computed as fma(r, cᵢ₊₁, fma(r², cᵢ₊₂ + cᵢ₊₃r, cᵢ)): a third of
// Horner's chain of dependent FMAs, in two registers; the last two steps,
// 1 + r(1 + rT), are Horner's, and their roundings decide the result.
// generic.go's expPoly does the same operations in the same order.
#define EXPPOLY \
	VMOVUPD magic<>(SB), Y2 \
	VFMADD231PD log2e<>(SB), Y1, Y2 \
	VSUBPD magic<>(SB), Y2, Y3 \
	VFNMADD231PD ln2hi<>(SB), Y3, Y1 \
	VFNMADD231PD ln2lo<>(SB), Y3, Y1 \
	VMULPD Y1, Y1, Y4 \
	VMULPD Y4, Y4, Y3 \
	VMOVUPD c13<>(SB), Y5 \
	VFMADD213PD c12<>(SB), Y1, Y5 \
	VFMADD213PD c10<>(SB), Y4, Y5 \
	VFMADD231PD c11<>(SB), Y1, Y5 \
	VMOVUPD c9<>(SB), Y6 \
	VFMADD213PD c8<>(SB), Y1, Y6 \
	VFMADD213PD c6<>(SB), Y4, Y6 \
	VFMADD231PD c7<>(SB), Y1, Y6 \
	VFMADD231PD Y5, Y3, Y6 \
	VMOVUPD c5<>(SB), Y5 \
	VFMADD213PD c4<>(SB), Y1, Y5 \
	VFMADD213PD c2<>(SB), Y4, Y5 \
	VFMADD231PD c3<>(SB), Y1, Y5 \
	VFMADD231PD Y6, Y3, Y5 \
	VFMADD213PD c1<>(SB), Y1, Y5 \
	VFMADD213PD c0<>(SB), Y1, Y5

// NEGCLAMP sets Y1 = −min(|Y0|, c) for the constant c; Y13 holds the
// absolute-value mask. VMINPD takes c as its first source so that a NaN
// passes through.
#define NEGCLAMP(c) \
	VANDPD Y13, Y0, Y1; \
	VMOVUPD c, Y3; \
	VMINPD Y1, Y3, Y1; \
	VXORPD signbit<>(SB), Y1, Y1

// POW2(reg) turns an integral float64 k in reg into 2^k (k ≥ −1022).
#define POW2(reg) \
	VADDPD magic<>(SB), reg, reg; \
	VPSLLQ $52, reg, reg; \
	VPADDQ onebits<>(SB), reg, reg

// RENORM moves the exponent of the positive lanes of reg into the int64
// sums Y11 and leaves reg in [1, 2) (Y15 holds the mantissa mask, Y12 the
// bits of 1.0); clobbers Y3.
#define RENORM(reg) \
	VPSRLQ $52, reg, Y3; \
	VPSUBQ bias<>(SB), Y3, Y3; \
	VPADDQ Y3, Y11, Y11; \
	VPAND Y15, reg, reg; \
	VPOR Y12, reg, reg

// func expNegAVX2(dst, src *float64, n int)
// The full-range exp(−|x|): 2^k in two halves, each normal, so that a
// subnormal result is rounded once.
TEXT ·expNegAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVUPD absmask<>(SB), Y13

expLoop:
	CMPQ CX, $4
	JLT  expDone
	VMOVUPD (SI), Y0
	NEGCLAMP(clamp<>(SB))
	EXPPOLY
	VSUBPD magic<>(SB), Y2, Y3
	VMULPD half<>(SB), Y3, Y6
	VROUNDPD $1, Y6, Y6
	VSUBPD Y6, Y3, Y7
	POW2(Y6)
	POW2(Y7)
	VMULPD Y6, Y5, Y5
	VMULPD Y7, Y5, Y4
	VMOVUPD Y4, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $4, CX
	JMP  expLoop

expDone:
	VZEROUPPER
	RET

// func matVecTAVX2(xt, z *float64, d int, eta *float64, stride, n int)
// Sixteen sites per pass while they last (four independent FMA chains),
// then four.
TEXT ·matVecTAVX2(SB), NOSPLIT, $0-48
	MOVQ xt+0(FP), SI
	MOVQ z+8(FP), BX
	MOVQ d+16(FP), R8
	MOVQ eta+24(FP), DI
	MOVQ stride+32(FP), R9
	MOVQ n+40(FP), CX
	SHLQ $3, R9

mv16:
	CMPQ CX, $16
	JLT  mv4
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	MOVQ SI, R10
	MOVQ BX, R11
	MOVQ R8, DX

mv16i:
	TESTQ DX, DX
	JEQ   mv16s
	VBROADCASTSD (R11), Y4
	VFMADD231PD (R10), Y4, Y0
	VFMADD231PD 32(R10), Y4, Y1
	VFMADD231PD 64(R10), Y4, Y2
	VFMADD231PD 96(R10), Y4, Y3
	ADDQ $8, R11
	ADDQ R9, R10
	DECQ DX
	JMP  mv16i

mv16s:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $16, CX
	JMP  mv16

mv4:
	CMPQ CX, $4
	JLT  mvDone
	VXORPD Y0, Y0, Y0
	MOVQ SI, R10
	MOVQ BX, R11
	MOVQ R8, DX

mv4i:
	TESTQ DX, DX
	JEQ   mv4s
	VBROADCASTSD (R11), Y4
	VFMADD231PD (R10), Y4, Y0
	ADDQ $8, R11
	ADDQ R9, R10
	DECQ DX
	JMP  mv4i

mv4s:
	VMOVUPD Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $4, CX
	JMP  mv4

mvDone:
	VZEROUPPER
	RET

// func logisticAVX2(eta, y, n *float64, ni *int64, m, bits int, acc *Acc)
// Lanes: Y8 Lin, Y9 Corr, Y10 Prod, Y11 Exp. bits = 0 (every n is 1):
// the product takes u directly and is renormalised once, at the end (the
// wrapper keeps m small enough for that); otherwise uⁿ is powered over
// bits bits of ni, a lane whose bit is clear multiplying by 1 exactly, and
// the product is renormalised at every step.
TEXT ·logisticAVX2(SB), NOSPLIT, $0-56
	MOVQ eta+0(FP), SI
	MOVQ y+8(FP), BX
	MOVQ n+16(FP), DX
	MOVQ ni+24(FP), R8
	MOVQ m+32(FP), CX
	MOVQ bits+40(FP), R9
	MOVQ acc+48(FP), AX
	VMOVUPD 0(AX), Y8
	VMOVUPD 32(AX), Y9
	VMOVUPD 64(AX), Y10
	VMOVDQU 96(AX), Y11
	VMOVUPD onebits<>(SB), Y12
	VMOVUPD absmask<>(SB), Y13
	VPXOR   Y14, Y14, Y14
	VMOVDQU mantmask<>(SB), Y15

lgLoop:
	CMPQ CX, $4
	JLT  lgDone
	VMOVUPD (SI), Y0
	NEGCLAMP(clampFast<>(SB))
	EXPPOLY
	VPSLLQ $52, Y2, Y2
	VPADDQ Y12, Y2, Y2
	VMULPD Y2, Y5, Y4
	VADDPD Y12, Y4, Y5
	VSUBPD Y12, Y5, Y6
	VSUBPD Y6, Y4, Y6
	VMOVUPD threeHalves<>(SB), Y7
	VFNMADD231PD half<>(SB), Y5, Y7
	VMULPD Y7, Y6, Y6
	VMOVUPD (DX), Y3
	VFMADD231PD Y6, Y3, Y9
	VMAXPD Y14, Y0, Y7
	VMULPD Y3, Y7, Y7
	VFMSUB231PD (BX), Y0, Y7
	VADDPD Y7, Y8, Y8
	TESTQ R9, R9
	JNE   lgPow
	VMULPD Y5, Y10, Y10
	JMP   lgNext

lgPow:
	VMOVDQU (R8), Y2
	VMOVDQU bit1<>(SB), Y1
	VPAND Y1, Y2, Y6
	VPCMPEQQ Y14, Y6, Y6
	VBLENDVPD Y6, Y12, Y5, Y7
	MOVQ R9, R10

lgPowBit:
	DECQ R10
	JEQ  lgPowDone
	VMULPD Y5, Y5, Y5
	VPADDQ Y1, Y1, Y1
	VPAND Y1, Y2, Y6
	VPCMPEQQ Y14, Y6, Y6
	VBLENDVPD Y6, Y12, Y5, Y6
	VMULPD Y6, Y7, Y7
	JMP  lgPowBit

lgPowDone:
	VMULPD Y7, Y10, Y10
	RENORM(Y10)

lgNext:
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $32, DX
	ADDQ $32, R8
	SUBQ $4, CX
	JMP  lgLoop

lgDone:
	RENORM(Y10)
	VMOVUPD Y8, 0(AX)
	VMOVUPD Y9, 32(AX)
	VMOVUPD Y10, 64(AX)
	VMOVDQU Y11, 96(AX)
	VZEROUPPER
	RET

// func logisticFlatAVX2(eta, y, n *float64, m int, acc *Acc)
// logisticAVX2 with bits = 0 for m a multiple of eight: two groups of
// four sites per pass, their instructions interleaved so that each
// group's long dependent chain (the exponential's) overlaps the other's.
// Both groups add into the same lanes, the first group first, so the
// sums are those of four sites per pass. Lanes: Y12 Lin, Y13 Corr, Y14
// Prod; Y15 holds the bits of 1.0. The constants are memory operands:
// the two groups take the other twelve registers. The NaN of a NaN η
// reaches Lin through y·η, so the clamp need not keep it.
TEXT ·logisticFlatAVX2(SB), NOSPLIT, $0-40
	MOVQ eta+0(FP), SI
	MOVQ y+8(FP), BX
	MOVQ n+16(FP), DX
	MOVQ m+24(FP), CX
	MOVQ acc+32(FP), AX
	VMOVUPD 0(AX), Y12
	VMOVUPD 32(AX), Y13
	VMOVUPD 64(AX), Y14
	VMOVUPD onebits<>(SB), Y15

flLoop:
	CMPQ CX, $8
	JLT  flDone
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y6
	VANDPD absmask<>(SB), Y0, Y0
	VANDPD absmask<>(SB), Y6, Y6
	VMINPD clampFast<>(SB), Y0, Y0
	VMINPD clampFast<>(SB), Y6, Y6
	VXORPD signbit<>(SB), Y0, Y0
	VXORPD signbit<>(SB), Y6, Y6
	VMOVUPD magic<>(SB), Y1
	VMOVUPD magic<>(SB), Y7
	VFMADD231PD log2e<>(SB), Y0, Y1
	VFMADD231PD log2e<>(SB), Y6, Y7
	VSUBPD magic<>(SB), Y1, Y2
	VSUBPD magic<>(SB), Y7, Y8
	VFNMADD231PD ln2hi<>(SB), Y2, Y0
	VFNMADD231PD ln2hi<>(SB), Y8, Y6
	VFNMADD231PD ln2lo<>(SB), Y2, Y0
	VFNMADD231PD ln2lo<>(SB), Y8, Y6
	VMULPD Y0, Y0, Y3
	VMULPD Y6, Y6, Y9
	VMULPD Y3, Y3, Y2
	VMULPD Y9, Y9, Y8
	VMOVUPD c13<>(SB), Y4
	VMOVUPD c13<>(SB), Y10
	VFMADD213PD c12<>(SB), Y0, Y4
	VFMADD213PD c12<>(SB), Y6, Y10
	VFMADD213PD c10<>(SB), Y3, Y4
	VFMADD213PD c10<>(SB), Y9, Y10
	VFMADD231PD c11<>(SB), Y0, Y4
	VFMADD231PD c11<>(SB), Y6, Y10
	VMOVUPD c9<>(SB), Y5
	VMOVUPD c9<>(SB), Y11
	VFMADD213PD c8<>(SB), Y0, Y5
	VFMADD213PD c8<>(SB), Y6, Y11
	VFMADD213PD c6<>(SB), Y3, Y5
	VFMADD213PD c6<>(SB), Y9, Y11
	VFMADD231PD c7<>(SB), Y0, Y5
	VFMADD231PD c7<>(SB), Y6, Y11
	VFMADD231PD Y4, Y2, Y5
	VFMADD231PD Y10, Y8, Y11
	VMOVUPD c5<>(SB), Y4
	VMOVUPD c5<>(SB), Y10
	VFMADD213PD c4<>(SB), Y0, Y4
	VFMADD213PD c4<>(SB), Y6, Y10
	VFMADD213PD c2<>(SB), Y3, Y4
	VFMADD213PD c2<>(SB), Y9, Y10
	VFMADD231PD c3<>(SB), Y0, Y4
	VFMADD231PD c3<>(SB), Y6, Y10
	VFMADD231PD Y5, Y2, Y4
	VFMADD231PD Y11, Y8, Y10
	VFMADD213PD c1<>(SB), Y0, Y4
	VFMADD213PD c1<>(SB), Y6, Y10
	VFMADD213PD c0<>(SB), Y0, Y4
	VFMADD213PD c0<>(SB), Y6, Y10
	VPSLLQ $52, Y1, Y1
	VPSLLQ $52, Y7, Y7
	VPADDQ Y15, Y1, Y1
	VPADDQ Y15, Y7, Y7
	VMULPD Y1, Y4, Y4
	VMULPD Y7, Y10, Y10
	VADDPD Y15, Y4, Y5
	VADDPD Y15, Y10, Y11
	VSUBPD Y15, Y5, Y2
	VSUBPD Y15, Y11, Y8
	VSUBPD Y2, Y4, Y2
	VSUBPD Y8, Y10, Y8
	VMOVUPD threeHalves<>(SB), Y1
	VMOVUPD threeHalves<>(SB), Y7
	VFNMADD231PD half<>(SB), Y5, Y1
	VFNMADD231PD half<>(SB), Y11, Y7
	VMULPD Y1, Y2, Y2
	VMULPD Y7, Y8, Y8
	VMOVUPD (DX), Y1
	VMOVUPD 32(DX), Y7
	VFMADD231PD Y2, Y1, Y13
	VFMADD231PD Y8, Y7, Y13
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y6
	VXORPD Y3, Y3, Y3
	VXORPD Y9, Y9, Y9
	VMAXPD Y3, Y0, Y3
	VMAXPD Y9, Y6, Y9
	VMULPD Y1, Y3, Y3
	VMULPD Y7, Y9, Y9
	VFMSUB231PD (BX), Y0, Y3
	VFMSUB231PD 32(BX), Y6, Y9
	VADDPD Y3, Y12, Y12
	VADDPD Y9, Y12, Y12
	VMULPD Y5, Y14, Y14
	VMULPD Y11, Y14, Y14
	ADDQ $64, SI
	ADDQ $64, BX
	ADDQ $64, DX
	SUBQ $8, CX
	JMP  flLoop

flDone:
	VMOVDQU 96(AX), Y11
	VMOVDQU mantmask<>(SB), Y0
	VPSRLQ $52, Y14, Y3
	VPSUBQ bias<>(SB), Y3, Y3
	VPADDQ Y3, Y11, Y11
	VPAND Y0, Y14, Y14
	VPOR Y15, Y14, Y14
	VMOVUPD Y12, 0(AX)
	VMOVUPD Y13, 32(AX)
	VMOVUPD Y14, 64(AX)
	VMOVDQU Y11, 96(AX)
	VZEROUPPER
	RET

// RCP sets dst to an approximation of 1/src good to 12 bits, through
// float32 (0 where src exceeds the float32 range); xdst is the xmm half
// of dst.
#define RCP(src, xdst, dst) \
	VCVTPD2PSY src, xdst; \
	VRCPPS xdst, xdst; \
	VCVTPS2PD xdst, dst

// func studentTAVX2(eta, y, invQ *float64, m int, acc *Acc)
// Lanes: Y9 Corr, Y10 Prod, Y11 Exp. u's exponent is moved out before
// the product, so no finite u can overflow it. The reciprocal of u only
// scales the correction δ (at most 2⁻⁵³·u), so VRCPPS's 12 bits suffice.
TEXT ·studentTAVX2(SB), NOSPLIT, $0-40
	MOVQ eta+0(FP), SI
	MOVQ y+8(FP), BX
	MOVQ invQ+16(FP), DX
	MOVQ m+24(FP), CX
	MOVQ acc+32(FP), AX
	VMOVUPD 32(AX), Y9
	VMOVUPD 64(AX), Y10
	VMOVDQU 96(AX), Y11
	VMOVUPD onebits<>(SB), Y12
	VMOVDQU mantmask<>(SB), Y15

stLoop:
	CMPQ CX, $4
	JLT  stDone
	VMOVUPD (BX), Y1
	VSUBPD (SI), Y1, Y1
	VMULPD Y1, Y1, Y2
	VMULPD (DX), Y2, Y5
	VADDPD Y12, Y5, Y6
	VSUBPD Y12, Y6, Y0
	VSUBPD Y0, Y6, Y4
	VSUBPD Y4, Y12, Y4
	VSUBPD Y0, Y5, Y3
	VADDPD Y3, Y4, Y4
	RCP(Y6, X7, Y7)
	VFMADD231PD Y7, Y4, Y9
	RENORM(Y6)
	VMULPD Y6, Y10, Y10
	RENORM(Y10)
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $32, DX
	SUBQ $4, CX
	JMP  stLoop

stDone:
	VMOVUPD Y9, 32(AX)
	VMOVUPD Y10, 64(AX)
	VMOVDQU Y11, 96(AX)
	VZEROUPPER
	RET

// func logisticGradAVX2(eta, y, n *float64, ni *int64, m, bits int, acc *Acc, w *float64)
// logisticAVX2 that also stores each site's gradient weight
// y − n·σ(η) to w: σ = num/u with num = e where η's sign bit is set and 1
// elsewhere (VBLENDVPD on η itself), and y − n·σ one FNMADD. w is
// written after η is loaded, so it may be eta. The sums take the same
// operations in the same order as logisticAVX2's (and, for bits = 0, as
// logisticFlatAVX2's: their products are renormalised at the end only).
TEXT ·logisticGradAVX2(SB), NOSPLIT, $0-64
	MOVQ eta+0(FP), SI
	MOVQ y+8(FP), BX
	MOVQ n+16(FP), DX
	MOVQ ni+24(FP), R8
	MOVQ m+32(FP), CX
	MOVQ bits+40(FP), R9
	MOVQ acc+48(FP), AX
	MOVQ w+56(FP), DI
	VMOVUPD 0(AX), Y8
	VMOVUPD 32(AX), Y9
	VMOVUPD 64(AX), Y10
	VMOVDQU 96(AX), Y11
	VMOVUPD onebits<>(SB), Y12
	VMOVUPD absmask<>(SB), Y13
	VPXOR   Y14, Y14, Y14
	VMOVDQU mantmask<>(SB), Y15

lggLoop:
	CMPQ CX, $4
	JLT  lggDone
	VMOVUPD (SI), Y0
	NEGCLAMP(clampFast<>(SB))
	EXPPOLY
	VPSLLQ $52, Y2, Y2
	VPADDQ Y12, Y2, Y2
	VMULPD Y2, Y5, Y4
	VADDPD Y12, Y4, Y5
	VBLENDVPD Y0, Y4, Y12, Y1
	VDIVPD Y5, Y1, Y1
	VMOVUPD (DX), Y3
	VMOVUPD (BX), Y2
	VFNMADD231PD Y1, Y3, Y2
	VMOVUPD Y2, (DI)
	VSUBPD Y12, Y5, Y6
	VSUBPD Y6, Y4, Y6
	VMOVUPD threeHalves<>(SB), Y7
	VFNMADD231PD half<>(SB), Y5, Y7
	VMULPD Y7, Y6, Y6
	VFMADD231PD Y6, Y3, Y9
	VMAXPD Y14, Y0, Y7
	VMULPD Y3, Y7, Y7
	VFMSUB231PD (BX), Y0, Y7
	VADDPD Y7, Y8, Y8
	TESTQ R9, R9
	JNE   lggPow
	VMULPD Y5, Y10, Y10
	JMP   lggNext

lggPow:
	VMOVDQU (R8), Y2
	VMOVDQU bit1<>(SB), Y1
	VPAND Y1, Y2, Y6
	VPCMPEQQ Y14, Y6, Y6
	VBLENDVPD Y6, Y12, Y5, Y7
	MOVQ R9, R10

lggPowBit:
	DECQ R10
	JEQ  lggPowDone
	VMULPD Y5, Y5, Y5
	VPADDQ Y1, Y1, Y1
	VPAND Y1, Y2, Y6
	VPCMPEQQ Y14, Y6, Y6
	VBLENDVPD Y6, Y12, Y5, Y6
	VMULPD Y6, Y7, Y7
	JMP  lggPowBit

lggPowDone:
	VMULPD Y7, Y10, Y10
	RENORM(Y10)

lggNext:
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $32, DX
	ADDQ $32, R8
	ADDQ $32, DI
	SUBQ $4, CX
	JMP  lggLoop

lggDone:
	RENORM(Y10)
	VMOVUPD Y8, 0(AX)
	VMOVUPD Y9, 32(AX)
	VMOVUPD Y10, 64(AX)
	VMOVDQU Y11, 96(AX)
	VZEROUPPER
	RET

// func studentTGradAVX2(eta, y, invQ *float64, m int, acc *Acc, w *float64)
// studentTAVX2 that also stores w = r·invQ/u (one exact division; the
// sums' reciprocal stays VRCPPS's). Y8 holds the weights.
TEXT ·studentTGradAVX2(SB), NOSPLIT, $0-48
	MOVQ eta+0(FP), SI
	MOVQ y+8(FP), BX
	MOVQ invQ+16(FP), DX
	MOVQ m+24(FP), CX
	MOVQ acc+32(FP), AX
	MOVQ w+40(FP), DI
	VMOVUPD 32(AX), Y9
	VMOVUPD 64(AX), Y10
	VMOVDQU 96(AX), Y11
	VMOVUPD onebits<>(SB), Y12
	VMOVDQU mantmask<>(SB), Y15

stgLoop:
	CMPQ CX, $4
	JLT  stgDone
	VMOVUPD (BX), Y1
	VSUBPD (SI), Y1, Y1
	VMULPD Y1, Y1, Y2
	VMULPD (DX), Y2, Y5
	VADDPD Y12, Y5, Y6
	VMULPD (DX), Y1, Y8
	VDIVPD Y6, Y8, Y8
	VMOVUPD Y8, (DI)
	VSUBPD Y12, Y6, Y0
	VSUBPD Y0, Y6, Y4
	VSUBPD Y4, Y12, Y4
	VSUBPD Y0, Y5, Y3
	VADDPD Y3, Y4, Y4
	RCP(Y6, X7, Y7)
	VFMADD231PD Y7, Y4, Y9
	RENORM(Y6)
	VMULPD Y6, Y10, Y10
	RENORM(Y10)
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $4, CX
	JMP  stgLoop

stgDone:
	VMOVUPD Y9, 32(AX)
	VMOVUPD Y10, 64(AX)
	VMOVDQU Y11, 96(AX)
	VZEROUPPER
	RET

// FOLD sets the low float64 of x, the xmm half of y, to (l₀+l₂)+(l₁+l₃)
// for y's lanes l; clobbers X5.
#define FOLD(y, x) \
	VEXTRACTF128 $1, y, X5; \
	VADDPD X5, x, x; \
	VPERMILPD $1, x, X5; \
	VADDSD X5, x, x

// func addMatVecAVX2(xt, w *float64, np int, c float64, grad *float64, rows int)
// grad[i] += c·Σⱼ xt[i·np + j]·w[j] for np a positive multiple of four:
// four rows per pass while they last (one load of w feeds four
// independent FMA chains), then one. X15 holds c.
TEXT ·addMatVecAVX2(SB), NOSPLIT, $0-48
	MOVQ xt+0(FP), SI
	MOVQ w+8(FP), BX
	MOVQ np+16(FP), R8
	VMOVSD c+24(FP), X15
	MOVQ grad+32(FP), DI
	MOVQ rows+40(FP), CX
	SHLQ $3, R8

am4:
	CMPQ CX, $4
	JLT  am1
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	LEAQ (SI)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	LEAQ (R12)(R8*1), R13
	XORQ DX, DX

am4j:
	CMPQ DX, R8
	JGE  am4s
	VMOVUPD (BX)(DX*1), Y4
	VFMADD231PD (SI)(DX*1), Y4, Y0
	VFMADD231PD (R11)(DX*1), Y4, Y1
	VFMADD231PD (R12)(DX*1), Y4, Y2
	VFMADD231PD (R13)(DX*1), Y4, Y3
	ADDQ $32, DX
	JMP  am4j

am4s:
	FOLD(Y0, X0)
	FOLD(Y1, X1)
	FOLD(Y2, X2)
	FOLD(Y3, X3)
	VMOVSD (DI), X6
	VFMADD231SD X15, X0, X6
	VMOVSD X6, (DI)
	VMOVSD 8(DI), X6
	VFMADD231SD X15, X1, X6
	VMOVSD X6, 8(DI)
	VMOVSD 16(DI), X6
	VFMADD231SD X15, X2, X6
	VMOVSD X6, 16(DI)
	VMOVSD 24(DI), X6
	VFMADD231SD X15, X3, X6
	VMOVSD X6, 24(DI)
	LEAQ (R13)(R8*1), SI
	ADDQ $32, DI
	SUBQ $4, CX
	JMP  am4

am1:
	TESTQ CX, CX
	JEQ   amDone
	VXORPD Y0, Y0, Y0
	XORQ DX, DX

am1j:
	CMPQ DX, R8
	JGE  am1s
	VMOVUPD (BX)(DX*1), Y4
	VFMADD231PD (SI)(DX*1), Y4, Y0
	ADDQ $32, DX
	JMP  am1j

am1s:
	FOLD(Y0, X0)
	VMOVSD (DI), X6
	VFMADD231SD X15, X0, X6
	VMOVSD X6, (DI)
	ADDQ R8, SI
	ADDQ $8, DI
	DECQ CX
	JMP  am1

amDone:
	VZEROUPPER
	RET

// func logisticGradFlatAVX2(eta, y, n *float64, m int, acc *Acc, w *float64)
// logisticFlatAVX2 that also stores each site's gradient weight
// y − n·σ(η) to w, as logisticGradAVX2 computes it, after the sums (which
// reread η from memory) are done with the pass's eight sites, so that w
// may be eta. The sums are logisticFlatAVX2's, bit for bit.
TEXT ·logisticGradFlatAVX2(SB), NOSPLIT, $0-48
	MOVQ eta+0(FP), SI
	MOVQ y+8(FP), BX
	MOVQ n+16(FP), DX
	MOVQ m+24(FP), CX
	MOVQ acc+32(FP), AX
	MOVQ w+40(FP), DI
	VMOVUPD 0(AX), Y12
	VMOVUPD 32(AX), Y13
	VMOVUPD 64(AX), Y14
	VMOVUPD onebits<>(SB), Y15

fgLoop:
	CMPQ CX, $8
	JLT  fgDone
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y6
	VANDPD absmask<>(SB), Y0, Y0
	VANDPD absmask<>(SB), Y6, Y6
	VMINPD clampFast<>(SB), Y0, Y0
	VMINPD clampFast<>(SB), Y6, Y6
	VXORPD signbit<>(SB), Y0, Y0
	VXORPD signbit<>(SB), Y6, Y6
	VMOVUPD magic<>(SB), Y1
	VMOVUPD magic<>(SB), Y7
	VFMADD231PD log2e<>(SB), Y0, Y1
	VFMADD231PD log2e<>(SB), Y6, Y7
	VSUBPD magic<>(SB), Y1, Y2
	VSUBPD magic<>(SB), Y7, Y8
	VFNMADD231PD ln2hi<>(SB), Y2, Y0
	VFNMADD231PD ln2hi<>(SB), Y8, Y6
	VFNMADD231PD ln2lo<>(SB), Y2, Y0
	VFNMADD231PD ln2lo<>(SB), Y8, Y6
	VMULPD Y0, Y0, Y3
	VMULPD Y6, Y6, Y9
	VMULPD Y3, Y3, Y2
	VMULPD Y9, Y9, Y8
	VMOVUPD c13<>(SB), Y4
	VMOVUPD c13<>(SB), Y10
	VFMADD213PD c12<>(SB), Y0, Y4
	VFMADD213PD c12<>(SB), Y6, Y10
	VFMADD213PD c10<>(SB), Y3, Y4
	VFMADD213PD c10<>(SB), Y9, Y10
	VFMADD231PD c11<>(SB), Y0, Y4
	VFMADD231PD c11<>(SB), Y6, Y10
	VMOVUPD c9<>(SB), Y5
	VMOVUPD c9<>(SB), Y11
	VFMADD213PD c8<>(SB), Y0, Y5
	VFMADD213PD c8<>(SB), Y6, Y11
	VFMADD213PD c6<>(SB), Y3, Y5
	VFMADD213PD c6<>(SB), Y9, Y11
	VFMADD231PD c7<>(SB), Y0, Y5
	VFMADD231PD c7<>(SB), Y6, Y11
	VFMADD231PD Y4, Y2, Y5
	VFMADD231PD Y10, Y8, Y11
	VMOVUPD c5<>(SB), Y4
	VMOVUPD c5<>(SB), Y10
	VFMADD213PD c4<>(SB), Y0, Y4
	VFMADD213PD c4<>(SB), Y6, Y10
	VFMADD213PD c2<>(SB), Y3, Y4
	VFMADD213PD c2<>(SB), Y9, Y10
	VFMADD231PD c3<>(SB), Y0, Y4
	VFMADD231PD c3<>(SB), Y6, Y10
	VFMADD231PD Y5, Y2, Y4
	VFMADD231PD Y11, Y8, Y10
	VFMADD213PD c1<>(SB), Y0, Y4
	VFMADD213PD c1<>(SB), Y6, Y10
	VFMADD213PD c0<>(SB), Y0, Y4
	VFMADD213PD c0<>(SB), Y6, Y10
	VPSLLQ $52, Y1, Y1
	VPSLLQ $52, Y7, Y7
	VPADDQ Y15, Y1, Y1
	VPADDQ Y15, Y7, Y7
	VMULPD Y1, Y4, Y4
	VMULPD Y7, Y10, Y10
	VADDPD Y15, Y4, Y5
	VADDPD Y15, Y10, Y11
	VSUBPD Y15, Y5, Y2
	VSUBPD Y15, Y11, Y8
	VSUBPD Y2, Y4, Y2
	VSUBPD Y8, Y10, Y8
	VMOVUPD threeHalves<>(SB), Y1
	VMOVUPD threeHalves<>(SB), Y7
	VFNMADD231PD half<>(SB), Y5, Y1
	VFNMADD231PD half<>(SB), Y11, Y7
	VMULPD Y1, Y2, Y2
	VMULPD Y7, Y8, Y8
	VMOVUPD (DX), Y1
	VMOVUPD 32(DX), Y7
	VFMADD231PD Y2, Y1, Y13
	VFMADD231PD Y8, Y7, Y13
	VMOVUPD (SI), Y0
	VMOVUPD 32(SI), Y6
	VXORPD Y3, Y3, Y3
	VXORPD Y9, Y9, Y9
	VMAXPD Y3, Y0, Y3
	VMAXPD Y9, Y6, Y9
	VMULPD Y1, Y3, Y3
	VMULPD Y7, Y9, Y9
	VFMSUB231PD (BX), Y0, Y3
	VFMSUB231PD 32(BX), Y6, Y9
	VADDPD Y3, Y12, Y12
	VADDPD Y9, Y12, Y12
	VMULPD Y5, Y14, Y14
	VMULPD Y11, Y14, Y14
	VBLENDVPD Y0, Y4, Y15, Y2
	VBLENDVPD Y6, Y10, Y15, Y8
	VDIVPD Y5, Y2, Y2
	VDIVPD Y11, Y8, Y8
	VMOVUPD (BX), Y3
	VMOVUPD 32(BX), Y9
	VFNMADD231PD Y2, Y1, Y3
	VFNMADD231PD Y8, Y7, Y9
	VMOVUPD Y3, (DI)
	VMOVUPD Y9, 32(DI)
	ADDQ $64, SI
	ADDQ $64, BX
	ADDQ $64, DX
	ADDQ $64, DI
	SUBQ $8, CX
	JMP  fgLoop

fgDone:
	VMOVDQU 96(AX), Y11
	VMOVDQU mantmask<>(SB), Y0
	VPSRLQ $52, Y14, Y3
	VPSUBQ bias<>(SB), Y3, Y3
	VPADDQ Y3, Y11, Y11
	VPAND Y0, Y14, Y14
	VPOR Y15, Y14, Y14
	VMOVUPD Y12, 0(AX)
	VMOVUPD Y13, 32(AX)
	VMOVUPD Y14, 64(AX)
	VMOVDQU Y11, 96(AX)
	VZEROUPPER
	RET
