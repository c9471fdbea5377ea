// out = act(alpha * op(A) * op(B) + beta * C + bias) for a batch of m x n products over k, f32
// accumulation whatever the storage (f16/bf16 are widened on load, rounded once on store).
// A workgroup owns a BM x BN tile of out; its (BM / TM) x (BN / TN) invocations each own TM x TN
// outputs. VEC4 (TM, TN multiples of 4): an invocation's rows are runs of 4 (4 tr .. 4 tr + 3,
// then the same BM / (TM / 4) further on), as its columns, so each depth step reads its A and B
// values from workgroup memory as vec4s; otherwise rows tr + i * BM / TM and columns
// tc + j * BN / TN. Tiles of op(A) (BK x BM) and op(B) (BK x BN) are staged through workgroup
// memory, depth-major, each depth's row padded by 4 words (PA, PB) so the transposing stores of
// a row-major A (or a column-major B) spread over the banks instead of landing 16 deep on one;
// the next tile is fetched into registers while this one is multiplied. DB: two staging buffers,
// so a tile is stored while the other is read and each depth step takes one barrier, not two.
// CHECKED: m, n or k is not a multiple of its tile (bounds tests, zero fill); TRANS_A / TRANS_B:
// A is stored k x m / B n x k. HAS_C, HAS_BIAS, ACT (an activation code, see math.wgsl).

const BM: u32 = {{BM}}u;
const BN: u32 = {{BN}}u;
const BK: u32 = {{BK}}u;
const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;
const RS: u32 = BM / TM;   // thread rows
const CS: u32 = BN / TN;   // thread columns
const THREADS: u32 = RS * CS;
const A_LOADS: u32 = (BM * BK) / THREADS;
const B_LOADS: u32 = (BN * BK) / THREADS;
const PA: u32 = BM + 4u;   // words per depth of A's tile
const PB: u32 = BN + 4u;
const A_WORDS: u32 = PA * BK;
const B_WORDS: u32 = PB * BK;
//#if DB
const BUFS: u32 = 2u;
//#else
const BUFS: u32 = 1u;
//#endif

//#if VEC4
var<workgroup> As: array<vec4<f32>, BUFS * A_WORDS / 4u>;
var<workgroup> Bs: array<vec4<f32>, BUFS * B_WORDS / 4u>;

fn put_a(slot: u32, v: f32) {
  As[slot >> 2u][slot & 3u] = v;
}

fn put_b(slot: u32, v: f32) {
  Bs[slot >> 2u][slot & 3u] = v;
}

fn row_of(tr: u32, i: u32) -> u32 {
  return (i >> 2u) * (RS * 4u) + tr * 4u + (i & 3u);
}

fn col_of(tc: u32, j: u32) -> u32 {
  return (j >> 2u) * (CS * 4u) + tc * 4u + (j & 3u);
}
//#else
var<workgroup> As: array<f32, BUFS * A_WORDS>;
var<workgroup> Bs: array<f32, BUFS * B_WORDS>;

fn put_a(slot: u32, v: f32) {
  As[slot] = v;
}

fn put_b(slot: u32, v: f32) {
  Bs[slot] = v;
}

fn row_of(tr: u32, i: u32) -> u32 {
  return tr + i * RS;
}

fn col_of(tc: u32, j: u32) -> u32 {
  return tc + j * CS;
}
//#endif

// Element (r, kk) of A's tile (depth-major index), loaded from global memory (0 outside).
fn load_a(a_base: u32, row0: u32, k0: u32, idx: u32) -> f32 {
//#if TRANS_A
  let r = idx % BM;
  let kk = idx / BM;
  let row = row0 + r;
  let kd = k0 + kk;
//#if CHECKED
  if (row >= P.m || kd >= P.k) {
    return 0.0;
  }
//#endif
  return ld_a(a_base + kd * P.m + row);
//#else
  let r = idx / BK;
  let kk = idx % BK;
  let row = row0 + r;
  let kd = k0 + kk;
//#if CHECKED
  if (row >= P.m || kd >= P.k) {
    return 0.0;
  }
//#endif
  return ld_a(a_base + row * P.k + kd);
//#endif
}

// Where element idx of A's tile goes in its staging buffer (depth-major, padded rows).
fn a_slot(idx: u32) -> u32 {
//#if TRANS_A
  return (idx / BM) * PA + idx % BM;
//#else
  return (idx % BK) * PA + idx / BK;
//#endif
}

fn load_b(b_base: u32, col0: u32, k0: u32, idx: u32) -> f32 {
//#if TRANS_B
  let c = idx / BK;
  let kk = idx % BK;
  let col = col0 + c;
  let kd = k0 + kk;
//#if CHECKED
  if (col >= P.n || kd >= P.k) {
    return 0.0;
  }
//#endif
  return ld_b(b_base + col * P.k + kd);
//#else
  let c = idx % BN;
  let kk = idx / BN;
  let col = col0 + c;
  let kd = k0 + kk;
//#if CHECKED
  if (col >= P.n || kd >= P.k) {
    return 0.0;
  }
//#endif
  return ld_b(b_base + kd * P.n + col);
//#endif
}

fn b_slot(idx: u32) -> u32 {
//#if TRANS_B
  return (idx % BK) * PB + idx / BK;
//#else
  return (idx / BN) * PB + idx % BN;
//#endif
}

@compute @workgroup_size({{THREADS}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let tr = tid / CS;
  let tc = tid % CS;
  let row0 = wid.y * BM;
  let col0 = wid.x * BN;
  for (var b = wid.z; b < P.batch; b += nwg.z) {
    let a_base = b * P.a_stride;
    let b_base = b * P.b_stride;
    var acc: array<array<f32, TN>, TM>;
    for (var i = 0u; i < TM; i++) {
      for (var j = 0u; j < TN; j++) {
        acc[i][j] = 0.0;
      }
    }
    var pa: array<f32, A_LOADS>;
    var pb: array<f32, B_LOADS>;
    for (var l = 0u; l < A_LOADS; l++) {
      pa[l] = load_a(a_base, row0, 0u, tid + l * THREADS);
    }
    for (var l = 0u; l < B_LOADS; l++) {
      pb[l] = load_b(b_base, col0, 0u, tid + l * THREADS);
    }
//#if DB
    for (var l = 0u; l < A_LOADS; l++) {
      put_a(a_slot(tid + l * THREADS), pa[l]);
    }
    for (var l = 0u; l < B_LOADS; l++) {
      put_b(b_slot(tid + l * THREADS), pb[l]);
    }
    workgroupBarrier();
    var cur = 0u;
//#endif
    for (var k0 = 0u; k0 < P.k; k0 += BK) {
//#if DB
      let a_off = cur * A_WORDS;
      let b_off = cur * B_WORDS;
//#else
      let a_off = 0u;
      let b_off = 0u;
      workgroupBarrier();
      for (var l = 0u; l < A_LOADS; l++) {
        put_a(a_slot(tid + l * THREADS), pa[l]);
      }
      for (var l = 0u; l < B_LOADS; l++) {
        put_b(b_slot(tid + l * THREADS), pb[l]);
      }
      workgroupBarrier();
//#endif
      // Fetch the next tile while this one is multiplied.
      let next = k0 + BK;
      if (next < P.k) {
        for (var l = 0u; l < A_LOADS; l++) {
          pa[l] = load_a(a_base, row0, next, tid + l * THREADS);
        }
        for (var l = 0u; l < B_LOADS; l++) {
          pb[l] = load_b(b_base, col0, next, tid + l * THREADS);
        }
      }
      for (var kk = 0u; kk < BK; kk++) {
        var av: array<f32, TM>;
        var bv: array<f32, TN>;
//#if VEC4
        for (var g = 0u; g < TM / 4u; g++) {
          let a4 = As[(a_off + kk * PA + g * RS * 4u) / 4u + tr];
          av[4u * g] = a4.x;
          av[4u * g + 1u] = a4.y;
          av[4u * g + 2u] = a4.z;
          av[4u * g + 3u] = a4.w;
        }
        for (var g = 0u; g < TN / 4u; g++) {
          let b4 = Bs[(b_off + kk * PB + g * CS * 4u) / 4u + tc];
          bv[4u * g] = b4.x;
          bv[4u * g + 1u] = b4.y;
          bv[4u * g + 2u] = b4.z;
          bv[4u * g + 3u] = b4.w;
        }
//#else
        for (var i = 0u; i < TM; i++) {
          av[i] = As[a_off + kk * PA + row_of(tr, i)];
        }
        for (var j = 0u; j < TN; j++) {
          bv[j] = Bs[b_off + kk * PB + col_of(tc, j)];
        }
//#endif
        for (var i = 0u; i < TM; i++) {
          for (var j = 0u; j < TN; j++) {
            acc[i][j] = fma(av[i], bv[j], acc[i][j]);
          }
        }
      }
//#if DB
      // Stage the fetched tile in the other buffer (last read before the previous barrier).
      cur = 1u - cur;
      if (next < P.k) {
        for (var l = 0u; l < A_LOADS; l++) {
          put_a(cur * A_WORDS + a_slot(tid + l * THREADS), pa[l]);
        }
        for (var l = 0u; l < B_LOADS; l++) {
          put_b(cur * B_WORDS + b_slot(tid + l * THREADS), pb[l]);
        }
      }
      workgroupBarrier();
//#endif
    }
    let out_base = b * P.m * P.n;
    let c_base = b * P.c_stride;
    for (var i = 0u; i < TM; i++) {
      let row = row0 + row_of(tr, i);
      for (var j = 0u; j < TN; j++) {
        let col = col0 + col_of(tc, j);
//#if CHECKED
        if (row >= P.m || col >= P.n) {
          continue;
        }
//#endif
        var v = P.alpha * acc[i][j];
//#if HAS_C
        v = v + P.beta * ld_c(c_base + row * P.n + col);
//#endif
//#if HAS_BIAS
        v = v + ld_bias(col);
//#endif
//#if ACT
        v = activation({{ACT}}u, v);
//#endif
        st_out(out_base + row * P.n + col, v);
      }
    }
  }
}
