import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Context, Device, DeviceBuffer, Module } from '../../../src/driver/index.js';
import { f32, u32 } from '../../../src/ffi/kernel-args.js';
import { autoCudaIncludes } from '../../../src/nvrtc/cuda-include.js';
import { KernelCache } from '../../../src/nvrtc/kernel-cache.js';
import { NvrtcError } from '../../../src/nvrtc/nvrtc-error.js';
import { compileProgram } from '../../../src/nvrtc/program.js';
import * as nvrtc from '../../../src/nvrtc/raw.js';
import { gpuAvailable } from '../gpu-available.js';

const N = 1 << 16;
const BLOCK = 256;

const vectorAdd = `
template <typename T>
__global__ void add(const T* a, const T* b, T* c, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
`;

// Needs cuda_fp16.h and cuda_bf16.h from the toolkit (and, on CUDA 13, include/cccl).
const mixedPrecision = `
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void widen_add(const __half* a, const __nv_bfloat16* b, float* out, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __half2float(a[i]) + __bfloat162float(b[i]);
}
`;

// setmaxnreg exists only on sm_90a; the module also holds a plain kernel to run.
const hopperSpecific = `
extern "C" __global__ void producer_regs() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\\n");
}
extern "C" __global__ void scale(float* x, float factor, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}
`;

function randomFloats(n: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (Math.random() - 0.5) * 200; // never all zeros
  return out;
}

/** Random normal half-precision bit patterns (no zeros, subnormals, inf or NaN). */
function randomHalfBits(n: number): Uint16Array {
  const bits = new Uint16Array(n);
  for (let i = 0; i < n; i++) {
    const exponent = 8 + Math.floor(Math.random() * 14); // 2^-7 .. 2^6
    bits[i] = ((Math.random() < 0.5 ? 1 : 0) << 15) | (exponent << 10) | Math.floor(Math.random() * 1024);
  }
  return bits;
}

function halfToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  return sign * 2 ** (exponent - 15) * (1 + (bits & 0x3ff) / 1024);
}

/** Random normal bfloat16 bit patterns. */
function randomBf16Bits(n: number): Uint16Array {
  const bits = new Uint16Array(n);
  for (let i = 0; i < n; i++) {
    const exponent = 120 + Math.floor(Math.random() * 14); // 2^-7 .. 2^6
    bits[i] = ((Math.random() < 0.5 ? 1 : 0) << 15) | (exponent << 7) | Math.floor(Math.random() * 128);
  }
  return bits;
}

function bf16ToNumber(bits: number): number {
  const view = new DataView(new ArrayBuffer(4));
  view.setUint32(0, bits << 16);
  return view.getFloat32(0);
}

describe.skipIf(!gpuAvailable)('NVRTC Program on the GPU', () => {
  let ctx: Context;
  let device: Device;
  const cacheRoot = mkdtempSync(join(tmpdir(), 'gpucompute-gpu-nvrtc-'));

  beforeAll(() => {
    device = Device.get(0);
    ctx = device.primaryContext();
    ctx.makeCurrent();
    const { major, minor } = nvrtc.version();
    console.log(`device ${device.name} (${device.arch}), NVRTC ${major}.${minor}, archs ${nvrtc.getSupportedArchs().join(' ')}`);
  });

  afterAll(() => {
    ctx?.dispose();
    rmSync(cacheRoot, { recursive: true, force: true });
  });

  /** Runs `c = a + b` on fresh random floats through a compiled image; exact comparison. */
  function runVectorAdd(image: Uint8Array, kernelName: string): void {
    const a = randomFloats(N);
    const b = randomFloats(N);
    const c = new Float32Array(N);
    using module = Module.load(ctx, image);
    const kernel = module.getFunction(kernelName);
    using da = DeviceBuffer.alloc(ctx, a.byteLength);
    using db = DeviceBuffer.alloc(ctx, b.byteLength);
    using dc = DeviceBuffer.alloc(ctx, c.byteLength);
    da.copyFromHost(a);
    db.copyFromHost(b);
    kernel.launch({ grid: Math.ceil(N / BLOCK), block: BLOCK }, [da, db, dc, u32(N)]);
    ctx.synchronize();
    dc.copyToHost(c);
    for (let i = 0; i < N; i++) {
      if (c[i] !== Math.fround(a[i]! + b[i]!)) throw new Error(`c[${i}] = ${c[i]}, expected ${Math.fround(a[i]! + b[i]!)}`);
    }
  }

  it("compiles for the device's own arch by default (CUBIN) and runs it", () => {
    const result = compileProgram(vectorAdd, { name: 'vector_add.cu', nameExpressions: ['add<float>'], cache: false });
    expect(result.output).toBe('cubin');
    expect(result.arch).toBe(device.arch);
    expect([...result.image.subarray(0, 4)]).toEqual([0x7f, 0x45, 0x4c, 0x46]);
    console.log(`first compile of vector_add (${result.arch}): ${result.compileMs.toFixed(1)} ms`);
    runVectorAdd(result.image, result.loweredNames['add<float>']!);
  });

  it('compiles PTX on request and the driver loads it', () => {
    const result = compileProgram(vectorAdd, { nameExpressions: ['add<float>'], output: 'ptx', cache: false });
    expect(result.output).toBe('ptx');
    expect(result.arch).toBe(device.arch.replace('sm_', 'compute_'));
    runVectorAdd(result.image, result.loweredNames['add<float>']!);
  });

  it('finds cuda_fp16.h and cuda_bf16.h automatically (with include/cccl on CUDA 13)', () => {
    const { major } = nvrtc.version();
    const search = autoCudaIncludes(major);
    console.log(`CUDA headers: ${JSON.stringify(search)}`);
    expect(search.paths.length).toBeGreaterThan(0);
    if (major >= 13) expect(search.paths.some((p) => p.endsWith('cccl'))).toBe(true);

    const result = compileProgram(mixedPrecision, { name: 'widen_add.cu', cache: false });
    const a = randomHalfBits(N);
    const b = randomBf16Bits(N);
    const out = new Float32Array(N);
    using module = Module.load(ctx, result.image);
    const kernel = module.getFunction('widen_add');
    using da = DeviceBuffer.alloc(ctx, a.byteLength);
    using db = DeviceBuffer.alloc(ctx, b.byteLength);
    using dout = DeviceBuffer.alloc(ctx, out.byteLength);
    da.copyFromHost(a);
    db.copyFromHost(b);
    kernel.launch({ grid: Math.ceil(N / BLOCK), block: BLOCK }, [da, db, dout, u32(N)]);
    ctx.synchronize();
    dout.copyToHost(out);
    let mismatches = 0;
    for (let i = 0; i < N; i++) {
      // Both inputs widen exactly and their double sum is exact, so fround is the device's rounding.
      if (out[i] !== Math.fround(halfToNumber(a[i]!) + bf16ToNumber(b[i]!))) mismatches++;
    }
    expect(mismatches).toBe(0);
  });

  it.skipIf(!gpuAvailable || Device.get(0).arch !== 'sm_90')('compiles sm_90a on request and loads it on a 9.0 device', () => {
    const result = compileProgram(hopperSpecific, { arch: 'sm_90a', name: 'hopper.cu', cache: false });
    expect(result.arch).toBe('sm_90a');
    expect(result.output).toBe('cubin');
    const x = randomFloats(N);
    using module = Module.load(ctx, result.image);
    module.getFunction('producer_regs');
    const kernel = module.getFunction('scale');
    using dx = DeviceBuffer.alloc(ctx, x.byteLength);
    dx.copyFromHost(x);
    kernel.launch({ grid: Math.ceil(N / BLOCK), block: BLOCK }, [dx, f32(0.5), u32(N)]);
    ctx.synchronize();
    const y = new Float32Array(N);
    dx.copyToHost(y);
    let mismatches = 0;
    for (let i = 0; i < N; i++) if (y[i] !== Math.fround(x[i]! * 0.5)) mismatches++;
    expect(mismatches).toBe(0);
    // The same source is refused for plain sm_90 (ptxas: setmaxnreg needs sm_90a).
    expect(() => compileProgram(hopperSpecific, { arch: 'sm_90', cache: false })).toThrow(NvrtcError);
  });

  it('serves a cache hit (identical image, lowered names) that loads and runs', () => {
    const cache = new KernelCache({ dir: join(cacheRoot, 'kernels') });
    const options = { name: 'vector_add.cu', nameExpressions: ['add<float>'], cache };
    const miss = compileProgram(vectorAdd, options);
    const memoryHit = compileProgram(vectorAdd, options);
    const diskHit = compileProgram(vectorAdd, { ...options, cache: new KernelCache({ dir: cache.dir }) });
    expect([miss.cacheHit, memoryHit.cacheHit, diskHit.cacheHit]).toEqual([false, true, true]);
    expect(Buffer.from(diskHit.image).equals(Buffer.from(miss.image))).toBe(true);
    expect(diskHit.loweredNames).toEqual(miss.loweredNames);
    console.log(
      `vector_add: compile ${miss.compileMs.toFixed(1)} ms, memory hit ${(memoryHit.compileMs * 1000).toFixed(0)} µs, ` +
        `disk hit ${(diskHit.compileMs * 1000).toFixed(0)} µs`,
    );
    runVectorAdd(diskHit.image, diskHit.loweredNames['add<float>']!);
  });
});
