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


// TRANSPOSE4 reads the 4×4 block of four rows at AX (R12 bytes apart)
// and transposes it into columns k … k+3 in Y0–Y3; clobbers R13, Y4–Y7.
#define TRANSPOSE4 \
	VMOVUPD    (AX), Y0; \
	VMOVUPD    (AX)(R12*1), Y1; \
	LEAQ       (AX)(R12*2), R13; \
	VMOVUPD    (R13), Y2; \
	VMOVUPD    (R13)(R12*1), Y3; \
	VUNPCKLPD  Y1, Y0, Y4; \
	VUNPCKHPD  Y1, Y0, Y5; \
	VUNPCKLPD  Y3, Y2, Y6; \
	VUNPCKHPD  Y3, Y2, Y7; \
	VPERM2F128 $0x20, Y6, Y4, Y0; \
	VPERM2F128 $0x20, Y7, Y5, Y1; \
	VPERM2F128 $0x31, Y6, Y4, Y2; \
	VPERM2F128 $0x31, Y7, Y5, Y3

// PAIRCOL(col, off) adds column col times each direction's coordinate at
// off bytes into the block (u at R9, v at R10, from coordinate BX) to
// the two directions' sums Y8 and Y9: VBROADCASTSD, VMULPD, VADDPD, a
// lane's term of projectRows' sum in its order.
#define PAIRCOL(col, off) \
	VBROADCASTSD off(R9)(BX*8), Y10; \
	VMULPD       Y10, col, Y10; \
	VADDPD       Y10, Y8, Y8; \
	VBROADCASTSD off(R10)(BX*8), Y11; \
	VMULPD       Y11, col, Y11; \
	VADDPD       Y11, Y9, Y9

// QUADCOL(col, off) adds column col times each direction's coordinate at
// off bytes into the block to the four directions' sums Y8–Y11, as
// PAIRCOL.
#define QUADCOL(col, off) \
	VBROADCASTSD off(R9)(BX*8), Y4; \
	VMULPD       Y4, col, Y4; \
	VADDPD       Y4, Y8, Y8; \
	VBROADCASTSD off(R10)(BX*8), Y5; \
	VMULPD       Y5, col, Y5; \
	VADDPD       Y5, Y9, Y9; \
	VBROADCASTSD off(R11)(BX*8), Y6; \
	VMULPD       Y6, col, Y6; \
	VADDPD       Y6, Y10, Y10; \
	VBROADCASTSD off(DI)(BX*8), Y7; \
	VMULPD       Y7, col, Y7; \
	VADDPD       Y7, Y11, Y11

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
	TRANSPOSE4
	PAIRCOL(Y0, 0)
	PAIRCOL(Y1, 8)
	PAIRCOL(Y2, 16)
	PAIRCOL(Y3, 24)
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

// func binIndexesAVX(xs *float64, n int, lo, hi, invH float64, last int, idx *int32)
//
// idx[i] = min(uint(int((x−lo)·invH)), last) for each of the n values x
// at xs (n a multiple of 4) that lies in [lo, hi) — binIndex's bin, by
// the same subtraction, product and truncation — and that with its sign
// bit set for one outside or NaN (VCMPPD's unordered predicates are true
// on NaN, as !(x >= lo && x < hi) is). In range the product is at most
// about 2¹⁷, so VCVTTPD2DQ's 32 bits hold it.
TEXT ·binIndexesAVX(SB), NOSPLIT, $0-56
	MOVQ         xs+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSD lo+16(FP), Y13
	VBROADCASTSD hi+24(FP), Y14
	VBROADCASTSD invH+32(FP), Y15
	VPBROADCASTD last+40(FP), X11
	MOVQ         idx+48(FP), DI
	MOVQ         $0x80000000, AX
	MOVQ         AX, X10
	VPBROADCASTD X10, X10
	XORQ         DX, DX

bi:
	CMPQ        DX, CX
	JGE         bidone
	VMOVUPD     (SI)(DX*8), Y0
	VCMPPD      $0x19, Y13, Y0, Y1 // !(x >= lo)
	VCMPPD      $0x15, Y14, Y0, Y2 // !(x < hi)
	VORPD       Y2, Y1, Y1
	VSUBPD      Y13, Y0, Y3
	VMULPD      Y15, Y3, Y3
	VCVTTPD2DQY Y3, X4
	VPMINUD     X11, X4, X4
	VEXTRACTF128 $1, Y1, X5
	VSHUFPS     $0x88, X5, X1, X1 // each lane's low half
	VPAND       X10, X1, X1
	VPOR        X1, X4, X4
	VMOVDQU     X4, (DI)(DX*4)
	ADDQ        $4, DX
	JMP         bi

bidone:
	VZEROUPPER
	RET

// func binPairAVX(tab, xs, ws, vs *float64, idx *int32, j, n int, acc *float64) int
//
// binBoth from atom j up to n or the first atom outside the bins (idx's
// sign bit, binIndexesAVX), whose index it returns: for each atom x of
// masses w and v, its bin's entry [w, w·x, v, v·x] is added with one
// 32-byte load, VADDPD and store, and acc's [Σ w·x·x, Σ v·x·x] with one
// VADDPD. Each lane's products and sums are binBoth's scalar ones in the
// same order, so the same bits; what changes is one store an atom
// instead of four (scattered stores retire in order, and four a bin
// filled the store queue), and the bins found before, four at a time.
// It asks the cache for the bin 64 atoms ahead: idx has 64 entries past
// n (zeros, or an earlier chunk's bins), each a bin once its sign bit is
// cleared.
TEXT ·binPairAVX(SB), NOSPLIT, $0-72
	MOVQ    tab+0(FP), DI
	MOVQ    xs+8(FP), SI
	MOVQ    ws+16(FP), R8
	MOVQ    vs+24(FP), R9
	MOVQ    idx+32(FP), R10
	MOVQ    j+40(FP), DX
	MOVQ    n+48(FP), CX
	MOVQ    acc+56(FP), R11
	VMOVUPD (R11), X12

bp:
	CMPQ        DX, CX
	JGE         bpdone
	MOVL        (R10)(DX*4), AX
	TESTL       AX, AX
	JS          bpdone
	MOVL        256(R10)(DX*4), BX
	ANDL        $0x7fffffff, BX
	SHLQ        $5, BX
	PREFETCHT0  (DI)(BX*1)
	VMOVDDUP    (SI)(DX*8), X2     // [x, x]
	VMOVSD      (R8)(DX*8), X1
	VMOVHPD     (R9)(DX*8), X1, X1 // [w, v]
	VMULPD      X2, X1, X3         // [w·x, v·x]
	VMULPD      X2, X3, X4         // [w·x·x, v·x·x]
	VADDPD      X4, X12, X12
	VUNPCKLPD   X3, X1, X5         // [w, w·x]
	VUNPCKHPD   X3, X1, X6         // [v, v·x]
	VINSERTF128 $1, X6, Y5, Y5
	SHLQ        $5, AX
	VADDPD      (DI)(AX*1), Y5, Y5
	VMOVUPD     Y5, (DI)(AX*1)
	INCQ        DX
	JMP         bp

bpdone:
	VMOVUPD X12, (R11)
	VZEROUPPER
	MOVQ    DX, ret+64(FP)
	RET

// func binOneAVX(tab, xs, ws *float64, idx *int32, j, n int, acc *float64, stride int) int
//
// binWeighted as binPairAVX does binBoth: bin k's [w, w·x], stride bytes
// apart in tab, added with one 16-byte load, VADDPD and store, and acc's
// Σ w·x·x with VADDSD, in binWeighted's order, so the same bits.
TEXT ·binOneAVX(SB), NOSPLIT, $0-72
	MOVQ   tab+0(FP), DI
	MOVQ   xs+8(FP), SI
	MOVQ   ws+16(FP), R8
	MOVQ   idx+24(FP), R10
	MOVQ   j+32(FP), DX
	MOVQ   n+40(FP), CX
	MOVQ   acc+48(FP), R11
	VMOVSD (R11), X12
	MOVQ   stride+56(FP), R9

b1:
	CMPQ       DX, CX
	JGE        b1done
	MOVL       (R10)(DX*4), AX
	TESTL      AX, AX
	JS         b1done
	MOVL       256(R10)(DX*4), BX
	ANDL       $0x7fffffff, BX
	IMULQ      R9, BX
	PREFETCHT0 (DI)(BX*1)
	VMOVSD     (SI)(DX*8), X0
	VMOVSD     (R8)(DX*8), X1
	VMULSD     X0, X1, X3         // w·x
	VMULSD     X0, X3, X4         // w·x·x
	VADDSD     X4, X12, X12
	VUNPCKLPD  X3, X1, X5         // [w, w·x]
	IMULQ      R9, AX
	VADDPD     (DI)(AX*1), X5, X5
	VMOVUPD    X5, (DI)(AX*1)
	INCQ       DX
	JMP        b1

b1done:
	VMOVSD X12, (R11)
	MOVQ   DX, ret+64(FP)
	RET

// func projectQuadAVX2(z *float64, n, d int, u, c *float64, xs **float64)
//
// projectPairAVX2 for four directions, the rows u[0:d], u[d:2d], u[2d:3d]
// and u[3d:4d], centred on c[0…3], into xs[0…3]: each 4×4 block of the
// rows is read and transposed once for all four, and each lane's sums
// are projectRows' scalar ones in the same order, so the same bits.
TEXT ·projectQuadAVX2(SB), NOSPLIT, $0-48
	MOVQ z+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ d+16(FP), R8
	MOVQ u+24(FP), R9
	MOVQ R8, R12
	SHLQ $3, R12             // bytes per row, and between directions
	LEAQ (R9)(R12*1), R10    // u1
	LEAQ (R9)(R12*2), R11    // u2
	LEAQ (R10)(R12*2), DI    // u3
	XORQ DX, DX              // atom

pq4:
	CMPQ   DX, CX
	JGE    pqdone
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	MOVQ   SI, AX            // row 0 of the four, column block k
	XORQ   BX, BX            // k

pqk:
	CMPQ       BX, R8
	JGE        pqstore
	TRANSPOSE4
	QUADCOL(Y0, 0)
	QUADCOL(Y1, 8)
	QUADCOL(Y2, 16)
	QUADCOL(Y3, 24)
	ADDQ       $32, AX
	ADDQ       $4, BX
	JMP        pqk

pqstore:
	MOVQ         c+32(FP), R13
	VBROADCASTSD 0(R13), Y4
	VSUBPD       Y4, Y8, Y8
	VBROADCASTSD 8(R13), Y5
	VSUBPD       Y5, Y9, Y9
	VBROADCASTSD 16(R13), Y6
	VSUBPD       Y6, Y10, Y10
	VBROADCASTSD 24(R13), Y7
	VSUBPD       Y7, Y11, Y11
	MOVQ         xs+40(FP), R13
	MOVQ         0(R13), AX
	VMOVUPD      Y8, (AX)(DX*8)
	MOVQ         8(R13), AX
	VMOVUPD      Y9, (AX)(DX*8)
	MOVQ         16(R13), AX
	VMOVUPD      Y10, (AX)(DX*8)
	MOVQ         24(R13), AX
	VMOVUPD      Y11, (AX)(DX*8)
	LEAQ         (SI)(R12*4), SI
	ADDQ         $4, DX
	JMP          pq4

pqdone:
	VZEROUPPER
	RET
