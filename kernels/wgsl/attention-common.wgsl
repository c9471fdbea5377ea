// What the attention kernels share. Each computes the scaled dot-product attention forward,
// softmax(scale * q k^T + mask) v, by blocks of keys with an online softmax (no Sq x Sk matrix).
// GQA: head h reads key/value head h / (Hq / Hkv). CAUSAL: query i sees keys 0..i (aligned top
// left). LENGTHS: keys at or after clamp(len[b], 0, Sk) are masked. A row that sees no key gets 0
// and a log-sum-exp of -inf (LSE writes it). A NaN score makes its row NaN, as on the CPU.

const LOG2E: f32 = 1.44269504088896341;
const LN2: f32 = 0.69314718055994531;

var<workgroup> valid_keys: u32;

// Keys batch b's rows may see, the same in every invocation (call in uniform control flow).
fn visible_keys(b: u32, tid: u32) -> u32 {
//#if LENGTHS
  if (tid == 0u) {
    valid_keys = u32(clamp(ldi_lengths(b), 0, i32(P.sk)));
  }
  return workgroupUniformLoad(&valid_keys);
//#else
  return P.sk;
//#endif
}

fn is_neg_inf(x: f32) -> bool {
  return bitcast<u32>(x) == 0xff800000u;
}

// 2^x, 0 below -150 (and at -inf), NaN kept.
fn exp2g(x: f32) -> f32 {
  return select(select(exp2(x), 0.0, x < -150.0), x, is_nan(x));
}

// The larger, ignoring a NaN b (a is never NaN).
fn max_num(a: f32, b: f32) -> f32 {
  return select(a, b, b > a);
}

// The block of query rows a workgroup takes, its head, the head's KV head and the batches it
// walks, as dispatchAttention lays workgroups out: (head, batch) pairs along x, head fastest;
// query blocks along y, the last (under CAUSAL the longest) first, so the longest blocks of every
// head start in the first wave and the short ones fill the tail; batches x has no room for along z.
struct AttentionTile {
  q0: u32,
  h: u32,
  kvh: u32,
  b0: u32,
  b_step: u32,
}

fn attention_tile(wid: vec3<u32>, nwg: vec3<u32>, bq: u32) -> AttentionTile {
  let bx = nwg.x / P.hq;
  let h = wid.x % P.hq;
  return AttentionTile((nwg.y - 1u - wid.y) * bq, h, h / (P.hq / P.hkv), wid.x / P.hq + bx * wid.z, bx * nwg.z);
}

// Where batch b's rows of head h start in q (and out), of KV head kvh in k and v, for head dim d.
fn q_start(b: u32, h: u32, d: u32) -> u32 {
  return ((b * P.hq + h) * P.sq) * d;
}

fn kv_start(b: u32, kvh: u32, d: u32) -> u32 {
  return ((b * P.hkv + kvh) * P.sk) * d;
}

// The keys some row of the block q0 .. q0 + bq - 1 sees (`valid`: the batch's visible keys).
fn block_key_end(valid: u32, q0: u32, bq: u32) -> u32 {
//#if CAUSAL
  return min(valid, q0 + bq);
//#else
  return valid;
//#endif
}

// The keys every row of the block sees: below it no mask applies.
fn block_dense_end(valid: u32, q0: u32) -> u32 {
//#if CAUSAL
  return min(valid, q0 + 1u);
//#else
  return valid;
//#endif
}

// The keys row `row` sees.
fn row_key_end(valid: u32, row: u32) -> u32 {
//#if CAUSAL
  return min(valid, row + 1u);
//#else
  return valid;
//#endif
}
