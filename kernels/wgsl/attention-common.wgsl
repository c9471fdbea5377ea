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
