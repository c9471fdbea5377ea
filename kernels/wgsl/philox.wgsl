// Philox4x32-10 (Salmon et al., SC'11), the stream behind rand, randn and dropout, laid out as on
// the CPU (src/compute/cpu/philox.ts): key = (seed low, seed high), counter = (block low, block
// high, 0, 0), element i takes word i % 4 of block i / 4. WGSL has no 64-bit product: the high
// word comes from 16-bit halves.

fn mul_hi(a: u32, b: u32) -> u32 {
  let a_lo = a & 0xffffu;
  let a_hi = a >> 16u;
  let b_lo = b & 0xffffu;
  let b_hi = b >> 16u;
  let lo_hi = a_lo * b_hi;
  let hi_lo = a_hi * b_lo;
  let mid = ((a_lo * b_lo) >> 16u) + (lo_hi & 0xffffu) + (hi_lo & 0xffffu);
  return a_hi * b_hi + (lo_hi >> 16u) + (hi_lo >> 16u) + (mid >> 16u);
}

fn philox(block_lo: u32, block_hi: u32, seed_lo: u32, seed_hi: u32) -> vec4<u32> {
  var c = vec4<u32>(block_lo, block_hi, 0u, 0u);
  var k0 = seed_lo;
  var k1 = seed_hi;
  for (var round = 0u; round < 10u; round++) {
    if (round > 0u) {
      k0 += 0x9e3779b9u;
      k1 += 0xbb67ae85u;
    }
    let hi0 = mul_hi(0xd2511f53u, c.x);
    let lo0 = 0xd2511f53u * c.x;
    let hi1 = mul_hi(0xcd9e8d57u, c.z);
    let lo1 = 0xcd9e8d57u * c.z;
    c = vec4<u32>(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
  }
  return c;
}

// A word -> uniform in [0, 1): its top 24 bits * 2^-24 (exact).
fn unit(word: u32) -> f32 {
  return f32(word >> 8u) * 5.9604644775390625e-8;
}
