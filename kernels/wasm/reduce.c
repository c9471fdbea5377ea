/*
 * Reductions over one axis of a tensor seen as [outer, axis_len, inner] (src/compute/core/
 * reduce-plan.ts), with the JS backend's meaning: float sums accumulate in f64 (mean divides the
 * f64 sum), i32 sums wrap, max/min propagate NaN and keep the first of ±0, argmax gives the first
 * NaN's index if any, else the first maximum's (index 0 when every element is -inf).
 *
 * inner == 1 reduces contiguous rows; inner > 1 is coalesced: a tile of up to TILE adjacent
 * outputs is accumulated in the thread's scratch while walking the axis, so each step of the axis
 * streams one contiguous run of the input.
 * Few outputs over a long axis are split into fixed chunks (reduce_partial, then reduce_combine
 * in chunk order); the chunking depends on the shape only, so any thread count gives the same bits.
 */
#include "common.h"
#include "ops.h"

#define TILE 32768


/* What one output has accumulated over a stretch of its axis. */
typedef struct {
  double value; /* sum (f64), or max/min value; i32 sums keep the wrapped sum in `index` */
  int32_t index; /* argmax: axis index of the best element (or of the first NaN) */
  int32_t nan;   /* max/min/argmax: a NaN was seen */
} partial;

/* Scratch of the coalesced tiles: f64 pairs (or f32 quads) and argmax positions per 4 outputs,
   then the tile's partial results. */
EXPORT(reduce_scratch_bytes) size_t reduce_scratch_bytes(void) { return (size_t)TILE / 4 * 3 * sizeof(v128_t) + TILE * sizeof(partial); }

/* ---------------------------------------------------------------- contiguous rows (inner == 1) */

INLINE partial row_sum_float(int dt, const char *p, size_t len) {
  size_t es = dtype_size(dt), i = 0;
  v128_t a0 = wasm_f64x2_splat(0), a1 = a0, a2 = a0, a3 = a0;
  for (; i + 8 <= len; i += 8) {
    f32x8 v = load8(dt, p + i * es);
    a0 = wasm_f64x2_add(a0, wasm_f64x2_promote_low_f32x4(v.lo));
    a1 = wasm_f64x2_add(a1, wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(v.lo, v.lo, 2, 3, 0, 1)));
    a2 = wasm_f64x2_add(a2, wasm_f64x2_promote_low_f32x4(v.hi));
    a3 = wasm_f64x2_add(a3, wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(v.hi, v.hi, 2, 3, 0, 1)));
  }
  v128_t s = wasm_f64x2_add(wasm_f64x2_add(a0, a1), wasm_f64x2_add(a2, a3));
  double acc = wasm_f64x2_extract_lane(s, 0) + wasm_f64x2_extract_lane(s, 1);
  for (; i < len; i++) acc += load1(dt, p, i);
  partial r = {acc, 0, 0};
  return r;
}

static partial row_sum_i32(const int32_t *p, size_t len) {
  size_t i = 0;
  v128_t a = I32(0), b = a;
  for (; i + 8 <= len; i += 8) {
    a = wasm_i32x4_add(a, wasm_v128_load(p + i));
    b = wasm_i32x4_add(b, wasm_v128_load(p + i + 4));
  }
  a = wasm_i32x4_add(a, b);
  uint32_t acc = (uint32_t)wasm_i32x4_extract_lane(a, 0) + (uint32_t)wasm_i32x4_extract_lane(a, 1) +
                 (uint32_t)wasm_i32x4_extract_lane(a, 2) + (uint32_t)wasm_i32x4_extract_lane(a, 3);
  for (; i < len; i++) acc += (uint32_t)p[i];
  partial r = {0, (int32_t)acc, 0};
  return r;
}

/* max (is_max) or min of a float row; NaN anywhere gives NaN. An extreme of ±0 takes the sign
   of the row's first zero, as the JS backend's strict comparisons do (wasm's min/max order -0
   below +0 instead). */
static partial row_extreme_float(int dt, const char *p, size_t len, int is_max) {
  size_t es = dtype_size(dt), i = 0;
  v128_t a = F32(is_max ? -__builtin_inff() : __builtin_inff()), b = a;
  for (; i + 8 <= len; i += 8) {
    f32x8 v = load8(dt, p + i * es);
    a = is_max ? wasm_f32x4_max(a, v.lo) : wasm_f32x4_min(a, v.lo);
    b = is_max ? wasm_f32x4_max(b, v.hi) : wasm_f32x4_min(b, v.hi);
  }
  v128_t c = is_max ? wasm_f32x4_max(a, b) : wasm_f32x4_min(a, b);
  for (; i < len; i++) {
    v128_t v = F32(load1(dt, p, i));
    c = is_max ? wasm_f32x4_max(c, v) : wasm_f32x4_min(c, v);
  }
  c = is_max ? wasm_f32x4_max(c, wasm_i32x4_shuffle(c, c, 2, 3, 0, 1)) : wasm_f32x4_min(c, wasm_i32x4_shuffle(c, c, 2, 3, 0, 1));
  c = is_max ? wasm_f32x4_max(c, wasm_i32x4_shuffle(c, c, 1, 0, 3, 2)) : wasm_f32x4_min(c, wasm_i32x4_shuffle(c, c, 1, 0, 3, 2));
  float v = wasm_f32x4_extract_lane(c, 0);
  if (v == 0.0f)
    for (size_t k = 0; k < len; k++)
      if (load1(dt, p, k) == 0.0f) {
        v = load1(dt, p, k);
        break;
      }
  partial r = {v, 0, v != v};
  return r;
}

static partial row_extreme_i32(const int32_t *p, size_t len, int is_max) {
  size_t i = 0;
  v128_t a = I32(is_max ? INT32_MIN : INT32_MAX);
  for (; i + 4 <= len; i += 4) {
    v128_t v = wasm_v128_load(p + i);
    a = is_max ? wasm_i32x4_max(a, v) : wasm_i32x4_min(a, v);
  }
  int32_t acc = is_max ? INT32_MIN : INT32_MAX;
  for (int l = 0; l < 4; l++) {
    int32_t v = ((int32_t *)&a)[l];
    acc = is_max ? (v > acc ? v : acc) : (v < acc ? v : acc);
  }
  for (; i < len; i++) acc = is_max ? (p[i] > acc ? p[i] : acc) : (p[i] < acc ? p[i] : acc);
  partial r = {acc, 0, 0};
  return r;
}

/* Lane-wise argmax state: the best value of each lane and where it was; the lowest index wins
   ties because only a strictly greater value replaces the best. */
INLINE int32_t lanes_argmax(v128_t best, v128_t where, int32_t none) {
  float m = hmax(best);
  int32_t idx = none;
  for (int l = 0; l < 4; l++) {
    int32_t w = ((int32_t *)&where)[l];
    if (((float *)&best)[l] == m && w != none && (idx == none || w < idx)) idx = w;
  }
  return idx;
}

static partial row_argmax_float(int dt, const char *p, size_t len) {
  size_t es = dtype_size(dt), i = 0;
  const int32_t none = -1;
  v128_t best = F32(-__builtin_inff()), where = I32(none);
  v128_t lane = wasm_i32x4_make(0, 1, 2, 3);
  partial r = {0, 0, 0};
  for (; i + 4 <= len; i += 4) {
    v128_t v = load4(dt, p + i * es);
    if (wasm_v128_any_true(wasm_f32x4_ne(v, v))) break; /* the scalar loop finds the first NaN */
    v128_t gt = wasm_f32x4_gt(v, best);
    best = wasm_v128_bitselect(v, best, gt);
    where = wasm_v128_bitselect(wasm_i32x4_add(lane, I32((int32_t)i)), where, gt);
  }
  int32_t idx = lanes_argmax(best, where, none);
  float bv = idx == none ? -__builtin_inff() : load1(dt, p, (size_t)idx);
  for (; i < len; i++) {
    float v = load1(dt, p, i);
    if (v != v) {
      r.index = (int32_t)i;
      r.nan = 1;
      return r;
    }
    if (v > bv) {
      bv = v;
      idx = (int32_t)i;
    }
  }
  r.index = idx == none ? 0 : idx;
  r.value = bv;
  return r;
}

static partial row_argmax_i32(const int32_t *p, size_t len) {
  size_t i = 0;
  const int32_t none = -1;
  v128_t best = I32(INT32_MIN), where = I32(none);
  v128_t lane = wasm_i32x4_make(0, 1, 2, 3);
  for (; i + 4 <= len; i += 4) {
    v128_t v = wasm_v128_load(p + i);
    v128_t gt = wasm_i32x4_gt(v, best);
    best = wasm_v128_bitselect(v, best, gt);
    where = wasm_v128_bitselect(wasm_i32x4_add(lane, I32((int32_t)i)), where, gt);
  }
  int32_t idx = none, bv = INT32_MIN;
  for (int l = 0; l < 4; l++) {
    int32_t w = ((int32_t *)&where)[l], v = ((int32_t *)&best)[l];
    if (w != none && (v > bv || (v == bv && (idx == none || w < idx)))) {
      bv = v;
      idx = w;
    }
  }
  /* No lane moved past INT32_MIN: every element so far is INT32_MIN, so the first one is the max. */
  if (idx == none && i > 0) idx = 0;
  for (; i < len; i++) {
    if (idx == none || p[i] > bv) {
      bv = p[i];
      idx = (int32_t)i;
    }
  }
  partial r = {bv, idx == none ? 0 : idx, 0};
  return r;
}

/* One contiguous row of `len` elements. */
static partial reduce_row(int op, int dt, const char *p, size_t len) {
  if (dt == DT_I32) {
    const int32_t *q = (const int32_t *)p;
    switch (op) {
      case R_SUM: return row_sum_i32(q, len);
      case R_MAX: return row_extreme_i32(q, len, 1);
      case R_MIN: return row_extreme_i32(q, len, 0);
      default: return row_argmax_i32(q, len);
    }
  }
  switch (op) {
    case R_SUM:
    case R_MEAN:
      switch (dt) {
        case DT_F32: return row_sum_float(DT_F32, p, len);
        case DT_F16: return row_sum_float(DT_F16, p, len);
        default: return row_sum_float(DT_BF16, p, len);
      }
    case R_MAX: return row_extreme_float(dt, p, len, 1);
    case R_MIN: return row_extreme_float(dt, p, len, 0);
    default: return row_argmax_float(dt, p, len);
  }
}

/* ---------------------------------------------------------------- strided (inner > 1)
 * `count` ≤ TILE adjacent outputs, element k of output c at p + (k·inner + c)·es.
 */

/* Folds one more axis element v (position k) into the running max/min/argmax of four outputs:
   strictly better values replace, so the first of equal values (±0) stays, as in the JS backend;
   the first NaN wins and stays (argmax keeps its position). */
INLINE void fold_extreme(int op, v128_t v, int32_t k, v128_t *best, v128_t *where) {
  v128_t nan = wasm_f32x4_ne(v, v);
  if (op == R_ARGMAX) {
    v128_t take = wasm_v128_or(wasm_f32x4_gt(v, *best), wasm_v128_andnot(nan, wasm_f32x4_ne(*best, *best)));
    take = wasm_v128_or(take, wasm_i32x4_eq(*where, I32(-1)));
    *best = wasm_v128_bitselect(v, *best, take);
    *where = wasm_v128_bitselect(I32(k), *where, take);
  } else {
    v128_t better = op == R_MAX ? wasm_f32x4_gt(v, *best) : wasm_f32x4_lt(v, *best);
    *best = wasm_v128_bitselect(v, *best, wasm_v128_or(better, nan));
  }
}

/* The same for one output of the tile's tail, in scalars. */
INLINE void fold_tail(int op, float v, int32_t k, double *sum, float *best, int32_t *where, int32_t *nan) {
  if (op == R_SUM) *sum += v;
  else if (op == R_ARGMAX) {
    if (!*nan && (v != v || v > *best || *where < 0)) {
      *best = v;
      *where = k;
      *nan = v != v;
    }
  } else if (v != v || (op == R_MAX ? v > *best : v < *best)) {
    *best = v;
  }
}

/* Sums fold four axis elements into the f64 accumulators at once (a quarter of the accumulator
   traffic); max/min/argmax fold them in order in registers. op is R_SUM for means too. */
INLINE void tile_float(int op, int dt, const char *p, size_t len, size_t inner, size_t count, partial *out, v128_t *scratch) {
  size_t es = dtype_size(dt), stride = inner * es;
  size_t vec = count & ~(size_t)3;
  v128_t *acc = scratch;                /* f64 pairs for sums, f32 quads otherwise: TILE / 2 */
  v128_t *where = scratch + TILE / 2;   /* TILE / 4 */
  float tail_best[4];
  double tail_sum[4];
  int32_t tail_where[4], tail_nan[4];
  v128_t init = F32(op == R_MIN ? __builtin_inff() : -__builtin_inff());
  for (size_t c = 0; c < vec / 4; c++) {
    acc[2 * c] = acc[2 * c + 1] = op == R_SUM ? wasm_f64x2_splat(0) : init;
    where[c] = I32(-1);
  }
  for (size_t t = 0; t < count - vec; t++) {
    tail_best[t] = op == R_MIN ? __builtin_inff() : -__builtin_inff();
    tail_sum[t] = 0;
    tail_where[t] = -1;
    tail_nan[t] = 0;
  }
  size_t k = 0;
  for (; k < len; k += 4) {
    size_t rows = len - k < 4 ? len - k : 4;
    const char *r0 = p + k * stride;
    for (size_t c = 0; c < vec; c += 4) {
      const char *at = r0 + c * es;
      v128_t *a = &acc[c / 2];
      if (op == R_SUM) {
        v128_t lo = wasm_f64x2_splat(0), hi = lo;
        for (size_t r = 0; r < rows; r++) {
          v128_t v = load4(dt, at + r * stride);
          lo = wasm_f64x2_add(lo, wasm_f64x2_promote_low_f32x4(v));
          hi = wasm_f64x2_add(hi, wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(v, v, 2, 3, 0, 1)));
        }
        a[0] = wasm_f64x2_add(a[0], lo);
        a[1] = wasm_f64x2_add(a[1], hi);
      } else {
        v128_t best = a[0], w = where[c / 4];
        for (size_t r = 0; r < rows; r++) fold_extreme(op, load4(dt, at + r * stride), (int32_t)(k + r), &best, &w);
        a[0] = best;
        where[c / 4] = w;
      }
    }
    for (size_t c = vec; c < count; c++) {
      size_t t = c - vec;
      for (size_t r = 0; r < rows; r++)
        fold_tail(op, load1(dt, r0 + r * stride, c), (int32_t)(k + r), &tail_sum[t], &tail_best[t], &tail_where[t], &tail_nan[t]);
    }
  }
  for (size_t c = 0; c < count; c++) {
    partial r = {0, 0, 0};
    if (c < vec) {
      v128_t *a = &acc[(c & ~(size_t)3) / 2];
      int l = (int)(c & 3);
      if (op == R_SUM) r.value = l < 2 ? ((double *)&a[0])[l] : ((double *)&a[1])[l - 2];
      else r.value = ((float *)&a[0])[l];
      if (op == R_ARGMAX) r.index = ((int32_t *)&where[c / 4])[l];
    } else {
      size_t t = c - vec;
      r.value = op == R_SUM ? tail_sum[t] : tail_best[t];
      r.index = tail_where[t];
    }
    r.nan = r.value != r.value;
    out[c] = r;
  }
}

static void tile_i32(int op, const int32_t *p, size_t len, size_t inner, size_t count, partial *out) {
  for (size_t c = 0; c < count; c++) {
    uint32_t sum = 0;
    int32_t best = op == R_MIN ? INT32_MAX : INT32_MIN, where = 0;
    for (size_t k = 0; k < len; k++) {
      int32_t v = p[k * inner + c];
      switch (op) {
        case R_SUM: sum += (uint32_t)v; break;
        case R_MAX: best = v > best ? v : best; break;
        case R_MIN: best = v < best ? v : best; break;
        default:
          if (v > best || k == 0) {
            best = v;
            where = (int32_t)k;
          }
      }
    }
    partial r = {best, op == R_SUM ? (int32_t)sum : where, 0};
    out[c] = r;
  }
}

/* Strided i32 tiles go through vectors too: same loop as floats without conversion. */
static void tile_i32_vec(int op, const int32_t *p, size_t len, size_t inner, size_t count, partial *out, v128_t *scratch) {
  size_t vec = count & ~(size_t)3;
  v128_t *acc = scratch, *where = scratch + TILE / 4;
  for (size_t c = 0; c < vec / 4; c++) {
    acc[c] = I32(op == R_SUM ? 0 : op == R_MIN ? INT32_MAX : INT32_MIN);
    where[c] = I32(0);
  }
  for (size_t k = 0; k < len; k++) {
    const int32_t *row = p + k * inner;
    for (size_t c = 0; c < vec; c += 4) {
      v128_t v = wasm_v128_load(row + c);
      v128_t *a = &acc[c / 4];
      switch (op) {
        case R_SUM: *a = wasm_i32x4_add(*a, v); break;
        case R_MAX: *a = wasm_i32x4_max(*a, v); break;
        case R_MIN: *a = wasm_i32x4_min(*a, v); break;
        default: {
          v128_t take = k == 0 ? I32(-1) : wasm_i32x4_gt(v, *a);
          *a = wasm_v128_bitselect(v, *a, take);
          where[c / 4] = wasm_v128_bitselect(I32((int32_t)k), where[c / 4], take);
        }
      }
    }
  }
  for (size_t c = 0; c < vec; c++) {
    int32_t v = ((int32_t *)&acc[c / 4])[c & 3];
    partial r = {v, op == R_SUM ? v : ((int32_t *)&where[c / 4])[c & 3], 0};
    out[c] = r;
  }
  if (vec < count) tile_i32(op, p + vec, len, inner, count - vec, out + vec);
}

/* One specialised loop per (op, dtype): the op and dtype are constants inside. */
#define TILE_FLOAT_OP(OP)                                                                        \
  switch (dt) {                                                                                  \
    case DT_F32: tile_float(OP, DT_F32, p, len, inner, count, out, scratch); return;            \
    case DT_F16: tile_float(OP, DT_F16, p, len, inner, count, out, scratch); return;            \
    default: tile_float(OP, DT_BF16, p, len, inner, count, out, scratch); return;                \
  }

static void reduce_tile(int op, int dt, const char *p, size_t len, size_t inner, size_t count, partial *out, v128_t *scratch) {
  if (dt == DT_I32) {
    tile_i32_vec(op, (const int32_t *)p, len, inner, count, out, scratch);
    return;
  }
  switch (op) {
    case R_SUM:
    case R_MEAN: TILE_FLOAT_OP(R_SUM)
    case R_MAX: TILE_FLOAT_OP(R_MAX)
    case R_MIN: TILE_FLOAT_OP(R_MIN)
    default: TILE_FLOAT_OP(R_ARGMAX)
  }
}
#undef TILE_FLOAT_OP

/* ---------------------------------------------------------------- results */

/* Folds b (a later stretch of the axis) into a. */
static partial combine(int op, int dt, partial a, partial b) {
  if (op == R_SUM || op == R_MEAN) {
    if (dt == DT_I32) a.index = (int32_t)((uint32_t)a.index + (uint32_t)b.index);
    else a.value += b.value;
    return a;
  }
  if (a.nan) return a;
  if (b.nan) return b;
  if (op == R_ARGMAX) return b.value > a.value ? b : a;
  if (op == R_MAX) return b.value > a.value ? b : a;
  return b.value < a.value ? b : a;
}

/* Writes output j: argmax → i32 index; i32 input → i32; floats rounded to dt (mean = sum/len). */
static void finish(int op, int dt, void *dst, size_t j, partial r, size_t axis_len) {
  if (op == R_ARGMAX) {
    ((int32_t *)dst)[j] = r.index;
    return;
  }
  if (dt == DT_I32) {
    ((int32_t *)dst)[j] = op == R_SUM ? r.index : (int32_t)r.value;
    return;
  }
  double v = r.nan ? __builtin_nan("") : r.value;
  if (op == R_MEAN) v /= (double)axis_len;
  store1(dt, dst, j, (float)v);
}

/* Longest axis the f32 sum/mean below takes: it walks the axis once per four outputs, so the
   axis's rows of a few vectors have to stay in L1 between walks. */
#define SHORT_AXIS 256

/* f32 sums and means of `count` adjacent outputs over a short axis, written straight to dst:
   the tile's accumulation in the same order (four axis elements summed from 0 in f64, then
   added to the output's sum; the tail outputs one element at a time) and finish()'s rounding,
   without the tile's accumulator and partial arrays and the per-output finish, which cost
   ~2 ns an input element: the hybrid trainer's ensemble mean of [5, 32, 10, 128] over axis 0
   took 0.11-0.14 ms against 0.24-0.63 ms (2 threads, medians of 32, alternating runs). */
static void sum_short_f32(int op, const float *p, size_t len, size_t inner, size_t count, float *dst) {
  size_t vec = count & ~(size_t)3;
  v128_t scale = wasm_f64x2_splat(op == R_MEAN ? (double)len : 1.0);
  for (size_t c = 0; c < vec; c += 4) {
    v128_t a0 = wasm_f64x2_splat(0), a1 = a0;
    for (size_t k = 0; k < len; k += 4) {
      size_t rows = len - k < 4 ? len - k : 4;
      v128_t lo = wasm_f64x2_splat(0), hi = lo;
      for (size_t r = 0; r < rows; r++) {
        v128_t v = wasm_v128_load(p + (k + r) * inner + c);
        lo = wasm_f64x2_add(lo, wasm_f64x2_promote_low_f32x4(v));
        hi = wasm_f64x2_add(hi, wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(v, v, 2, 3, 0, 1)));
      }
      a0 = wasm_f64x2_add(a0, lo);
      a1 = wasm_f64x2_add(a1, hi);
    }
    /* finish(): a NaN sum stores the canonical NaN; a mean divides the f64 sum (x / 1 is exact). */
    a0 = wasm_f64x2_div(a0, scale);
    a1 = wasm_f64x2_div(a1, scale);
    v128_t v = wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(a0), wasm_f32x4_demote_f64x2_zero(a1), 0, 1, 4, 5);
    v = wasm_v128_bitselect(F32(__builtin_nanf("")), v, wasm_f32x4_ne(v, v));
    wasm_v128_store(dst + c, v);
  }
  for (size_t c = vec; c < count; c++) {
    double sum = 0;
    for (size_t k = 0; k < len; k++) sum += p[k * inner + c];
    partial r = {sum, 0, sum != sum};
    finish(op, DT_F32, dst, c, r, len);
  }
}

/* Outputs (o, i) for o in [o0, o1), i in [i0, i1), each over the whole axis, into dst[o·inner + i];
   scratch holds reduce_scratch_bytes(). */
EXPORT(reduce) void reduce(int op, int dt, const void *src, size_t axis_len, size_t inner, size_t o0, size_t o1,
                           size_t i0, size_t i1, void *dst, v128_t *scratch) {
  size_t es = dtype_size(dt);
  const char *s = src;
  partial *tile = (partial *)(scratch + TILE / 4 * 3);
  for (size_t o = o0; o < o1; o++) {
    const char *base = s + o * axis_len * inner * es;
    if (inner == 1) {
      finish(op, dt, dst, o, reduce_row(op, dt, base, axis_len), axis_len);
      continue;
    }
    if (dt == DT_F32 && (op == R_SUM || op == R_MEAN) && axis_len <= SHORT_AXIS) {
      sum_short_f32(op, (const float *)base + i0, axis_len, inner, i1 - i0, (float *)dst + o * inner + i0);
      continue;
    }
    for (size_t i = i0; i < i1; i += TILE) {
      size_t count = i1 - i < TILE ? i1 - i : TILE;
      reduce_tile(op, dt, base + i * es, axis_len, inner, count, tile, scratch);
      for (size_t c = 0; c < count; c++) finish(op, dt, dst, o * inner + i + c, tile[c], axis_len);
    }
  }
}

/* For outer = 1: chunks [c0, c1) of chunk_len axis elements each, every output i in [0, inner),
   into partials[c·inner + i]. Argmax indices are axis positions. */
EXPORT(reduce_partial) void reduce_partial(int op, int dt, const void *src, size_t axis_len, size_t inner,
                                           size_t chunk_len, size_t c0, size_t c1, partial *partials, v128_t *scratch) {
  size_t es = dtype_size(dt);
  for (size_t c = c0; c < c1; c++) {
    size_t k0 = c * chunk_len, len = axis_len - k0 < chunk_len ? axis_len - k0 : chunk_len;
    const char *base = (const char *)src + k0 * inner * es;
    partial *out = partials + c * inner;
    if (inner == 1) out[0] = reduce_row(op, dt, base, len);
    else
      for (size_t i = 0; i < inner; i += TILE) reduce_tile(op, dt, base + i * es, len, inner, inner - i < TILE ? inner - i : TILE, out + i, scratch);
    for (size_t i = 0; i < inner; i++) out[i].index += (int32_t)(op == R_ARGMAX ? k0 : 0);
  }
}

/* Combines `chunks` rows of partials in chunk order and writes the `inner` outputs. */
EXPORT(reduce_combine) void reduce_combine(int op, int dt, const partial *partials, size_t chunks, size_t inner,
                                           size_t axis_len, void *dst) {
  for (size_t i = 0; i < inner; i++) {
    partial r = partials[i];
    for (size_t c = 1; c < chunks; c++) r = combine(op, dt, r, partials[c * inner + i]);
    finish(op, dt, dst, i, r, axis_len);
  }
}
