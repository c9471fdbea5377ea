/*
 * Broadcasting binary ops driven by the front-end's BroadcastPlan (src/compute/core/broadcast.ts):
 * the output is walked in row-major order as runs along its innermost dim, where each input
 * steps by 1 or repeats one element (its innermost stride is always 1 or 0 after collapsing).
 * A thread takes any range [begin, end) of output elements. f32 and i32 results are exact IEEE /
 * wrapping results, identical to the JS backend's; f16/bf16 compute in f32 and round on store.
 */
#include "common.h"
#include "ops.h"

#define MAX_RANK 6

/* The plan as the TS side writes it: int32 rank, then shape, a strides and b strides (elements). */
typedef struct {
  int32_t rank;
  int32_t shape[MAX_RANK];
  int32_t a_strides[MAX_RANK];
  int32_t b_strides[MAX_RANK];
} broadcast_plan;

/* max/min are wasm's: NaN if either side is NaN, and -0 < +0 (Math.max/min's meaning). */
INLINE v128_t fop(int op, v128_t a, v128_t b) {
  switch (op) {
    case B_ADD: return wasm_f32x4_add(a, b);
    case B_SUB: return wasm_f32x4_sub(a, b);
    case B_MUL: return wasm_f32x4_mul(a, b);
    case B_DIV: return wasm_f32x4_div(a, b);
    case B_MAX: return wasm_f32x4_max(a, b);
    default: return wasm_f32x4_min(a, b);
  }
}

INLINE v128_t iop(int op, v128_t a, v128_t b) {
  switch (op) {
    case B_ADD: return wasm_i32x4_add(a, b);
    case B_SUB: return wasm_i32x4_sub(a, b);
    case B_MUL: return wasm_i32x4_mul(a, b);
    case B_MAX: return wasm_i32x4_max(a, b);
    default: return wasm_i32x4_min(a, b);
  }
}

/* A float run of n outputs; a_step/b_step are 1 or 0 (a repeated element). */
INLINE void frun(int op, int dt, const char *a, int a_step, const char *b, int b_step, char *out, size_t n) {
  size_t es = dtype_size(dt), i = 0;
  if (a_step && b_step) {
    for (; i + 8 <= n; i += 8) {
      f32x8 x = load8(dt, a + i * es), y = load8(dt, b + i * es), r;
      r.lo = fop(op, x.lo, y.lo);
      r.hi = fop(op, x.hi, y.hi);
      store8(dt, out + i * es, r);
    }
  } else if (a_step) {
    v128_t y = F32(load1(dt, b, 0));
    for (; i + 8 <= n; i += 8) {
      f32x8 x = load8(dt, a + i * es), r;
      r.lo = fop(op, x.lo, y);
      r.hi = fop(op, x.hi, y);
      store8(dt, out + i * es, r);
    }
  } else if (b_step) {
    v128_t x = F32(load1(dt, a, 0));
    for (; i + 8 <= n; i += 8) {
      f32x8 y = load8(dt, b + i * es), r;
      r.lo = fop(op, x, y.lo);
      r.hi = fop(op, x, y.hi);
      store8(dt, out + i * es, r);
    }
  }
  for (; i < n; i++) {
    v128_t r = fop(op, F32(load1(dt, a, a_step ? i : 0)), F32(load1(dt, b, b_step ? i : 0)));
    store1(dt, out, i, wasm_f32x4_extract_lane(r, 0));
  }
}

INLINE void irun(int op, const int32_t *a, int a_step, const int32_t *b, int b_step, int32_t *out, size_t n) {
  size_t i = 0;
  v128_t as = I32(a[0]), bs = I32(b[0]);
  for (; i + 4 <= n; i += 4) {
    v128_t x = a_step ? wasm_v128_load(a + i) : as;
    v128_t y = b_step ? wasm_v128_load(b + i) : bs;
    wasm_v128_store(out + i, iop(op, x, y));
  }
  for (; i < n; i++) {
    v128_t r = iop(op, I32(a[a_step ? i : 0]), I32(b[b_step ? i : 0]));
    out[i] = wasm_i32x4_extract_lane(r, 0);
  }
}

/* One run, with the op and dtype resolved to a specialised loop. */
static void run(int op, int dt, const char *a, int a_step, const char *b, int b_step, char *out, size_t n) {
  if (dt == DT_I32) {
    switch (op) {
      case B_ADD: irun(B_ADD, (const int32_t *)a, a_step, (const int32_t *)b, b_step, (int32_t *)out, n); return;
      case B_SUB: irun(B_SUB, (const int32_t *)a, a_step, (const int32_t *)b, b_step, (int32_t *)out, n); return;
      case B_MUL: irun(B_MUL, (const int32_t *)a, a_step, (const int32_t *)b, b_step, (int32_t *)out, n); return;
      case B_MAX: irun(B_MAX, (const int32_t *)a, a_step, (const int32_t *)b, b_step, (int32_t *)out, n); return;
      default: irun(B_MIN, (const int32_t *)a, a_step, (const int32_t *)b, b_step, (int32_t *)out, n); return;
    }
  }
#define FRUN_OP(OP)                                                                 \
  switch (dt) {                                                                     \
    case DT_F32: frun(OP, DT_F32, a, a_step, b, b_step, out, n); return;            \
    case DT_F16: frun(OP, DT_F16, a, a_step, b, b_step, out, n); return;            \
    default: frun(OP, DT_BF16, a, a_step, b, b_step, out, n); return;               \
  }
  switch (op) {
    case B_ADD: FRUN_OP(B_ADD)
    case B_SUB: FRUN_OP(B_SUB)
    case B_MUL: FRUN_OP(B_MUL)
    case B_DIV: FRUN_OP(B_DIV)
    case B_MAX: FRUN_OP(B_MAX)
    default: FRUN_OP(B_MIN)
  }
#undef FRUN_OP
}

/* out[begin, end) = a op b under `plan`; a, b and out point at element 0 of their views. */
EXPORT(binary) void binary(int op, int dt, const void *a, const void *b, void *out, const broadcast_plan *plan,
                           size_t begin, size_t end) {
  size_t es = dtype_size(dt);
  int rank = plan->rank, last = rank - 1;
  size_t inner = (size_t)plan->shape[last];
  int a_step = plan->a_strides[last], b_step = plan->b_strides[last];
  /* Multi-index of `begin` and the input offsets it maps to. */
  size_t index[MAX_RANK];
  size_t rest = begin, ai = 0, bi = 0;
  for (int d = last; d >= 0; d--) {
    size_t extent = (size_t)plan->shape[d];
    index[d] = rest % extent;
    rest /= extent;
    ai += index[d] * (size_t)plan->a_strides[d];
    bi += index[d] * (size_t)plan->b_strides[d];
  }
  size_t pos = begin;
  while (pos < end) {
    size_t len = inner - index[last];
    if (len > end - pos) len = end - pos;
    run(op, dt, (const char *)a + ai * es, a_step, (const char *)b + bi * es, b_step, (char *)out + pos * es, len);
    pos += len;
    /* Step the odometer past the run: the innermost dim wraps, carrying outwards. */
    index[last] += len;
    ai += len * (size_t)a_step;
    bi += len * (size_t)b_step;
    for (int d = last; d > 0 && index[d] == (size_t)plan->shape[d]; d--) {
      ai -= index[d] * (size_t)plan->a_strides[d];
      bi -= index[d] * (size_t)plan->b_strides[d];
      index[d] = 0;
      index[d - 1]++;
      ai += (size_t)plan->a_strides[d - 1];
      bi += (size_t)plan->b_strides[d - 1];
    }
  }
}
