/*
 * Packed, register-blocked f32 GEMM with the matmul epilogue of src/compute/core/matmul-plan.ts:
 * out = act(alpha·op(A)·op(B) + beta·C + bias), batched by element strides (0 broadcasts).
 *
 * Loops after BLIS: column blocks of NC, depth slices of KC (a KC × NC block of op(B) packed
 * once per slice into micro-panels of NR columns), row blocks of MC (an MC × KC block of op(A)
 * packed into micro-panels of MR rows), then an MR × NR tile kept in eight vector registers.
 * A 4×8 tile (two vectors of B, four broadcast A values, eight accumulators) is what performed
 * well here; wider tiles spill (V8 has 16 vector registers on x64). f16/bf16 operands become f32
 * while packing. With K > KC the partial sums of the earlier slices live in `acc` (the f32 output
 * itself, or an f32 buffer the caller provides for 16-bit outputs); the epilogue runs once, on
 * the last slice, straight from the registers.
 *
 * A thread computes rows [i0, i1) × columns [j0, j1) of batch entries [e0, e1); K is never split,
 * so results do not depend on how the work is divided.
 */
#include "common.h"
#include "ops.h"
#include "microkernel.h"
#include "vmath.h"

#define MR 4
#define NR 8
#define KC 256
#define MC 128
#define NC 2048

/* Bytes of scratch one thread needs: the packed A block and the packed B block. */
#define GEMM_SCRATCH ((size_t)(MC * KC + KC * NC) * sizeof(float))

typedef struct {
  const char *a, *b, *c, *bias; /* c and bias may be null */
  char *out;
  float *acc;                   /* f32 partial sums [m × n, row stride ldacc] when K > KC */
  int32_t a_type, b_type, c_type, bias_type, out_type;
  int32_t m, n, k;
  int32_t lda, ldb, ldc, ldo, ldacc; /* row strides in elements, as stored */
  int32_t trans_a, trans_b;
  int32_t a_batch, b_batch, c_batch, out_batch, acc_batch; /* batch strides in elements */
  float alpha, beta;
  int32_t activation; /* ACT_NONE or a unary op code */
} gemm_params;

EXPORT(gemm_scratch_bytes) size_t gemm_scratch_bytes(void) { return GEMM_SCRATCH; }

/* KC: with more depth than this, 16-bit outputs need an f32 accumulator from the caller. */
EXPORT(gemm_block_depth) size_t gemm_block_depth(void) { return KC; }

/* ---------------------------------------------------------------- packing */

/* op(A) rows [i, i + mc) × depth [p0, p0 + kc) into MR-row micro-panels, zero-padded. */
static void pack_a(const gemm_params *g, const char *a, size_t i, size_t mc, size_t p0, size_t kc, float *dst) {
  int dt = g->a_type;
  size_t es = dtype_size(dt), lda = (size_t)g->lda;
  for (size_t r0 = 0; r0 < mc; r0 += MR, dst += MR * kc) {
    size_t live = mc - r0 < MR ? mc - r0 : MR;
    if (g->trans_a) {
      /* A stored K × M: row p of storage holds the MR values wanted at depth p. */
      for (size_t p = 0; p < kc; p++) {
        const char *src = a + ((p0 + p) * lda + i + r0) * es;
        if (live == MR) wasm_v128_store(dst + p * MR, load4(dt, src));
        else
          for (size_t r = 0; r < MR; r++) dst[p * MR + r] = r < live ? load1(dt, src, r) : 0.0f;
      }
    } else if (live == MR) {
      /* A stored M × K: transpose 4 × 4 blocks so each depth's MR values land together. */
      const char *s0 = a + ((i + r0) * lda + p0) * es, *s1 = s0 + lda * es, *s2 = s1 + lda * es, *s3 = s2 + lda * es;
      size_t p = 0;
      for (; p + 4 <= kc; p += 4) {
        v128_t x0 = load4(dt, s0 + p * es), x1 = load4(dt, s1 + p * es);
        v128_t x2 = load4(dt, s2 + p * es), x3 = load4(dt, s3 + p * es);
        v128_t t0 = wasm_i32x4_shuffle(x0, x1, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(x0, x1, 2, 6, 3, 7);
        v128_t t2 = wasm_i32x4_shuffle(x2, x3, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(x2, x3, 2, 6, 3, 7);
        wasm_v128_store(dst + p * MR, wasm_i64x2_shuffle(t0, t2, 0, 2));
        wasm_v128_store(dst + (p + 1) * MR, wasm_i64x2_shuffle(t0, t2, 1, 3));
        wasm_v128_store(dst + (p + 2) * MR, wasm_i64x2_shuffle(t1, t3, 0, 2));
        wasm_v128_store(dst + (p + 3) * MR, wasm_i64x2_shuffle(t1, t3, 1, 3));
      }
      for (; p < kc; p++) {
        dst[p * MR] = load1(dt, s0, p);
        dst[p * MR + 1] = load1(dt, s1, p);
        dst[p * MR + 2] = load1(dt, s2, p);
        dst[p * MR + 3] = load1(dt, s3, p);
      }
    } else {
      for (size_t p = 0; p < kc; p++)
        for (size_t r = 0; r < MR; r++) dst[p * MR + r] = r < live ? load1(dt, a, (i + r0 + r) * lda + p0 + p) : 0.0f;
    }
  }
}

/* op(B) depth [p0, p0 + kc) × columns [j, j + nc) into NR-column micro-panels, zero-padded. */
static void pack_b(const gemm_params *g, const char *b, size_t p0, size_t kc, size_t j, size_t nc, float *dst) {
  int dt = g->b_type;
  size_t es = dtype_size(dt), ldb = (size_t)g->ldb;
  for (size_t c0 = 0; c0 < nc; c0 += NR, dst += NR * kc) {
    size_t live = nc - c0 < NR ? nc - c0 : NR;
    if (!g->trans_b) {
      /* B stored K × N: NR adjacent values of one row per depth. */
      for (size_t p = 0; p < kc; p++) {
        const char *src = b + ((p0 + p) * ldb + j + c0) * es;
        if (live == NR) {
          f32x8 v = load8(dt, src);
          wasm_v128_store(dst + p * NR, v.lo);
          wasm_v128_store(dst + p * NR + 4, v.hi);
        } else {
          for (size_t q = 0; q < NR; q++) dst[p * NR + q] = q < live ? load1(dt, src, q) : 0.0f;
        }
      }
    } else {
      /* B stored N × K: each column is contiguous along the depth. */
      for (size_t q = 0; q < NR; q++) {
        if (q >= live) {
          for (size_t p = 0; p < kc; p++) dst[p * NR + q] = 0.0f;
          continue;
        }
        const char *src = b + ((j + c0 + q) * ldb + p0) * es;
        size_t p = 0;
        for (; p + 4 <= kc; p += 4) {
          v128_t v = load4(dt, src + p * es);
          dst[p * NR + q] = wasm_f32x4_extract_lane(v, 0);
          dst[(p + 1) * NR + q] = wasm_f32x4_extract_lane(v, 1);
          dst[(p + 2) * NR + q] = wasm_f32x4_extract_lane(v, 2);
          dst[(p + 3) * NR + q] = wasm_f32x4_extract_lane(v, 3);
        }
        for (; p < kc; p++) dst[p * NR + q] = load1(dt, src, p);
      }
    }
  }
}

/* ---------------------------------------------------------------- micro-kernel and epilogue */

/* The fused activation (a unary op code), resolved per tile. */
INLINE v128_t activate(int act, v128_t v) {
  switch (act) {
    case U_RELU: return wasm_f32x4_max(v, F32(0.0f));
    case U_GELU: return v_gelu(v);
    case U_GELU_TANH: return v_gelu_tanh(v);
    case U_SILU: return v_silu(v);
    case U_SIGMOID: return v_sigmoid(v);
    case U_TANH: return v_tanh(v);
    default: return v;
  }
}

/* Where one tile of the current batch entry goes. */
typedef struct {
  const char *c, *bias;
  char *out;
  float *acc;
} targets;

/* Adds the tile at (i, j) (mr × nr live) to the partial sums, or, on the last slice, finishes it:
   act(alpha·(partial + tile) + beta·C + bias) rounded to the output dtype. */
static void store_tile(const gemm_params *g, const targets *t, tile4x8 *tl, size_t i, size_t j, size_t mr, size_t nr,
                       int first, int last) {
  size_t ldacc = (size_t)g->ldacc;
  if (!last) {
    for (size_t r = 0; r < mr; r++) {
      float *row = t->acc + (i + r) * ldacc + j;
      for (int h = 0; h < 2; h++) {
        v128_t v = tl->c[r][h];
        if (nr == NR) {
          if (!first) v = wasm_f32x4_add(v, wasm_v128_load(row + 4 * h));
          wasm_v128_store(row + 4 * h, v);
        } else {
          for (size_t q = 0; q < 4 && 4 * h + q < nr; q++) {
            float s = ((float *)&v)[q];
            row[4 * h + q] = first ? s : row[4 * h + q] + s;
          }
        }
      }
    }
    return;
  }
  v128_t alpha = F32(g->alpha), beta = F32(g->beta);
  f32x8 bias = {F32(0), F32(0)};
  if (t->bias) {
    if (nr == NR) bias = load8(g->bias_type, t->bias + j * dtype_size(g->bias_type));
    else
      for (size_t q = 0; q < nr; q++) ((float *)(q < 4 ? &bias.lo : &bias.hi))[q & 3] = load1(g->bias_type, t->bias, j + q);
  }
  for (size_t r = 0; r < mr; r++) {
    f32x8 v = {tl->c[r][0], tl->c[r][1]};
    if (!first) {
      const float *row = t->acc + (i + r) * ldacc + j;
      if (nr == NR) {
        v.lo = wasm_f32x4_add(v.lo, wasm_v128_load(row));
        v.hi = wasm_f32x4_add(v.hi, wasm_v128_load(row + 4));
      } else {
        for (size_t q = 0; q < nr; q++) ((float *)(q < 4 ? &v.lo : &v.hi))[q & 3] += row[q];
      }
    }
    v.lo = wasm_f32x4_mul(v.lo, alpha);
    v.hi = wasm_f32x4_mul(v.hi, alpha);
    if (t->c) {
      size_t at = (i + r) * (size_t)g->ldc + j;
      f32x8 cv = {F32(0), F32(0)};
      if (nr == NR) cv = load8(g->c_type, t->c + at * dtype_size(g->c_type));
      else
        for (size_t q = 0; q < nr; q++) ((float *)(q < 4 ? &cv.lo : &cv.hi))[q & 3] = load1(g->c_type, t->c, at + q);
      v.lo = FMA(beta, cv.lo, v.lo);
      v.hi = FMA(beta, cv.hi, v.hi);
    }
    v.lo = activate(g->activation, wasm_f32x4_add(v.lo, bias.lo));
    v.hi = activate(g->activation, wasm_f32x4_add(v.hi, bias.hi));
    size_t at = (i + r) * (size_t)g->ldo + j;
    if (nr == NR) store8(g->out_type, t->out + at * dtype_size(g->out_type), v);
    else
      for (size_t q = 0; q < nr; q++) store1(g->out_type, t->out, at + q, ((float *)(q < 4 ? &v.lo : &v.hi))[q & 3]);
  }
}

/* ---------------------------------------------------------------- driver */

EXPORT(sgemm) void sgemm(const gemm_params *g, size_t e0, size_t e1, size_t i0, size_t i1, size_t j0, size_t j1,
                         float *scratch) {
  float *pa = scratch, *pb = scratch + MC * KC;
  size_t k = (size_t)g->k;
  for (size_t e = e0; e < e1; e++) {
    const char *a = g->a + e * (size_t)g->a_batch * dtype_size(g->a_type);
    const char *b = g->b + e * (size_t)g->b_batch * dtype_size(g->b_type);
    targets t = {g->c ? g->c + e * (size_t)g->c_batch * dtype_size(g->c_type) : 0, g->bias,
                 g->out + e * (size_t)g->out_batch * dtype_size(g->out_type),
                 g->acc ? g->acc + e * (size_t)g->acc_batch : 0};
    for (size_t jc = j0; jc < j1; jc += NC) {
      size_t nc = j1 - jc < NC ? j1 - jc : NC;
      /* k == 0 still runs one empty slice, so the epilogue writes beta·C + bias. */
      for (size_t pc = 0; pc < k || pc == 0; pc += KC) {
        size_t kc = k - pc < KC ? k - pc : KC;
        int first = pc == 0, last = pc + KC >= k;
        pack_b(g, b, pc, kc, jc, nc, pb);
        for (size_t ic = i0; ic < i1; ic += MC) {
          size_t mc = i1 - ic < MC ? i1 - ic : MC;
          pack_a(g, a, ic, mc, pc, kc, pa);
          for (size_t jr = 0; jr < nc; jr += NR) {
            size_t nr = nc - jr < NR ? nc - jr : NR;
            for (size_t ir = 0; ir < mc; ir += MR) {
              tile4x8 tl;
              micro_4x8(pa + ir * kc, 1, MR, pb + jr * kc, NR, kc, &tl);
              store_tile(g, &t, &tl, ic + ir, jc + jr, mc - ir < MR ? mc - ir : MR, nr, first, last);
            }
          }
        }
        if (k == 0) break;
      }
    }
  }
}
