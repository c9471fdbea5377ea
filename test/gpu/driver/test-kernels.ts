/**
 * Hand-written PTX for the driver's GPU tests, independent of NVRTC. Loaded as
 * text, the driver JIT-compiles it for the device (PTX ISA 7.8, sm_80 and later).
 */
export const TEST_KERNELS_PTX = String.raw`
.version 7.8
.target sm_80
.address_size 64

.extern .shared .align 16 .b8 dyn_smem[];
.visible .global .align 4 .u32 counter;

// c[i] = a[i] + b[i] for i < n
.visible .entry vector_add(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<11>;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [b];
  ld.param.u64 %rd3, [c];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd4, %rd1;
  cvta.to.global.u64 %rd5, %rd2;
  cvta.to.global.u64 %rd6, %rd3;
  mul.wide.u32 %rd7, %r5, 4;
  add.s64 %rd8, %rd4, %rd7;
  add.s64 %rd9, %rd5, %rd7;
  add.s64 %rd10, %rd6, %rd7;
  ld.global.f32 %f1, [%rd8];
  ld.global.f32 %f2, [%rd9];
  add.rn.f32 %f3, %f1, %f2;
  st.global.f32 [%rd10], %f3;
DONE:
  ret;
}

// y[i] = y[i] + a * x[i] (rounded twice, never fused) for i < n
.visible .entry axpy(.param .u64 y, .param .u64 x, .param .f32 a, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<6>;
  .reg .b64 %rd<9>;
  ld.param.u64 %rd1, [y];
  ld.param.u64 %rd2, [x];
  ld.param.f32 %f1, [a];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mul.wide.u32 %rd5, %r5, 4;
  add.s64 %rd6, %rd3, %rd5;
  add.s64 %rd7, %rd4, %rd5;
  ld.global.f32 %f2, [%rd6];
  ld.global.f32 %f3, [%rd7];
  mul.rn.f32 %f4, %f1, %f3;
  add.rn.f32 %f5, %f2, %f4;
  st.global.f32 [%rd6], %f5;
DONE:
  ret;
}

// Stores every parameter's bits at out: i32 @0, u32 @4, i64 @8, u64 @16, f32 @24, f64 @32.
.visible .entry args_probe(.param .s32 a, .param .u32 b, .param .s64 c, .param .u64 d, .param .f32 e, .param .f64 f, .param .u64 out)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<5>;
  .reg .f32 %f<2>;
  .reg .f64 %fd<2>;
  ld.param.s32 %r1, [a];
  ld.param.u32 %r2, [b];
  ld.param.s64 %rd1, [c];
  ld.param.u64 %rd2, [d];
  ld.param.f32 %f1, [e];
  ld.param.f64 %fd1, [f];
  ld.param.u64 %rd3, [out];
  cvta.to.global.u64 %rd4, %rd3;
  st.global.s32 [%rd4], %r1;
  st.global.u32 [%rd4+4], %r2;
  st.global.s64 [%rd4+8], %rd1;
  st.global.u64 [%rd4+16], %rd2;
  st.global.f32 [%rd4+24], %f1;
  st.global.f64 [%rd4+32], %fd1;
  ret;
}

// Each block loads its n floats into dynamic shared memory and writes them back reversed.
.visible .entry smem_reverse(.param .u64 in, .param .u64 out, .param .u32 n)
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .f32 %f<2>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r1, [n];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %ctaid.x;
  mul.lo.u32 %r5, %r4, %r1;
  mov.u32 %r11, dyn_smem;
  mov.u32 %r6, %r2;
LOAD:
  setp.ge.u32 %p1, %r6, %r1;
  @%p1 bra LOADED;
  add.u32 %r7, %r5, %r6;
  mul.wide.u32 %rd3, %r7, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.f32 %f1, [%rd4];
  shl.b32 %r8, %r6, 2;
  add.u32 %r9, %r11, %r8;
  st.shared.f32 [%r9], %f1;
  add.u32 %r6, %r6, %r3;
  bra LOAD;
LOADED:
  bar.sync 0;
  mov.u32 %r6, %r2;
STORE:
  setp.ge.u32 %p2, %r6, %r1;
  @%p2 bra DONE;
  sub.u32 %r10, %r1, %r6;
  sub.u32 %r10, %r10, 1;
  shl.b32 %r8, %r10, 2;
  add.u32 %r9, %r11, %r8;
  ld.shared.f32 %f1, [%r9];
  add.u32 %r7, %r5, %r6;
  mul.wide.u32 %rd3, %r7, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.f32 [%rd4], %f1;
  add.u32 %r6, %r6, %r3;
  bra STORE;
DONE:
  ret;
}

// Busy-waits ns nanoseconds of GPU time (the global timer).
.visible .entry spin(.param .u64 ns)
{
  .reg .pred %p<2>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [ns];
  mov.u64 %rd2, %globaltimer;
LOOP:
  mov.u64 %rd3, %globaltimer;
  sub.s64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p1, %rd4, %rd1;
  @%p1 bra LOOP;
  ret;
}

// Adds 1 to the module global counter per thread.
.visible .entry bump()
{
  .reg .b32 %r<2>;
  atom.global.add.u32 %r1, [counter], 1;
  ret;
}

// Does nothing: the launch cost alone.
.visible .entry empty()
{
  ret;
}

// Stores 1 at p: given a bad address, the kernel faults.
.visible .entry store_at(.param .u64 p)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, 1;
  st.global.u32 [%rd1], %r1;
  ret;
}
`;

/** Fresh random floats in [-1, 1) with a few extreme magnitudes mixed in, never zeros-only. */
export function randomFloats(count: number): Float32Array {
  const values = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const r = Math.random() * 2 - 1;
    values[i] = i % 97 === 0 ? r * 1e30 : i % 89 === 0 ? r * 1e-30 : r;
  }
  return values;
}

/** Counts positions where two float arrays differ bit for bit (NaN-safe), with the first one. */
export function mismatches(actual: Float32Array, expected: Float32Array): { count: number; first: number } {
  const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  const e = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  let count = 0;
  let first = -1;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== e[i]) {
      if (first < 0) first = i;
      count++;
    }
  }
  return { count, first };
}
