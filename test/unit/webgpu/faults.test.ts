/**
 * How the WebGPU backend fails: a missing `webgpu` package, no adapter on a required native
 * backend, Dawn validation errors (a destroyed buffer, a kernel that does not compile), Dawn's
 * out-of-memory, device loss (work refused afterwards, a pending read rejected rather than left
 * hanging), a synchronous wait past its limit, and use after dispose. Each is a typed error that
 * names the operation and carries Dawn's message; none crashes the process.
 */
import { describe, expect, it } from 'vitest';
import { DisposedError } from '../../../src/errors.js';
import { makeView } from '../../../src/compute/core/view.js';
import { listWebGpuAdapters, parseAdapterList, platformBackends, webgpuAdapterInfo } from '../../../src/compute/webgpu/adapter.js';
import { createWebGpuBackend } from '../../../src/compute/webgpu/webgpu-backend.js';
import {
  WEBGPU_INSTALL_COMMAND,
  WebGpuDeviceLostError,
  WebGpuError,
  WebGpuOutOfMemoryError,
  WebGpuTimeoutError,
  WebGpuUnavailableError,
} from '../../../src/compute/webgpu/webgpu-errors.js';
import type { WebGpuBuffer } from '../../../src/compute/webgpu/webgpu-memory.js';
import type { KernelSpec } from '../../../src/compute/webgpu/wgsl.js';
import { busySide, closePair, openPair, skipReason, suite } from './setup.js';

describe('WebGPU availability (no adapter needed)', () => {
  it('a missing package is a typed error with the install command', async () => {
    const missing = Object.assign(new Error("Cannot find package 'webgpu'"), { code: 'ERR_MODULE_NOT_FOUND' });
    const err = await createWebGpuBackend({ importer: () => Promise.reject(missing) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebGpuUnavailableError);
    expect((err as WebGpuUnavailableError).reason).toContain(WEBGPU_INSTALL_COMMAND);
    expect((err as Error).message).toContain('npm install webgpu@0.6.2');
    expect((err as Error).cause).toBe(missing);
  });

  it('a package without create() and globals is refused with the version needed', async () => {
    const err = await webgpuAdapterInfo({ importer: () => Promise.resolve({}) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebGpuUnavailableError);
    expect((err as Error).message).toContain('webgpu@0.6.2');
  });

  it("reads Dawn's adapter list", () => {
    const message = "no suitable backends found\nAvailable adapters:\n * backend: 'vulkan', name: 'llvmpipe (LLVM 15.0.6, 256 bits)'\n * backend: 'vulkan', name: 'NVIDIA H100 80GB HBM3'";
    expect(parseAdapterList(message)).toEqual([
      { backend: 'vulkan', name: 'llvmpipe (LLVM 15.0.6, 256 bits)' },
      { backend: 'vulkan', name: 'NVIDIA H100 80GB HBM3' },
    ]);
    expect(platformBackends('darwin')).toEqual(['metal']);
    expect(platformBackends('win32')).toEqual(['d3d12', 'vulkan']);
    expect(platformBackends('linux')).toEqual(['vulkan']);
  });
});

describe.skipIf(skipReason)(suite('WebGPU adapter'), () => {
  it('lists the adapters and describes the one in use: backend, vendor, features, limits', async () => {
    const adapters = await listWebGpuAdapters();
    expect(adapters.length).toBeGreaterThanOrEqual(1);
    const info = await webgpuAdapterInfo();
    expect(platformBackends()).toContain(info.backendType);
    expect(adapters.some((a) => a.backend === info.backendType)).toBe(true);
    expect(typeof info.vendor).toBe('string');
    expect(Object.keys(info.features).sort()).toEqual(['shader-f16', 'subgroups', 'timestamp-query']);
    expect(info.limits.maxStorageBufferBindingSize).toBeGreaterThanOrEqual(2 ** 27);
    expect(info.allFeatures.length).toBeGreaterThan(0);
  });

  it('an adapter on a native backend this platform lacks is a typed error', async () => {
    const absent = process.platform === 'darwin' ? 'vulkan' : 'metal';
    const err = await createWebGpuBackend({ requireBackend: absent }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebGpuUnavailableError);
    expect((err as Error).message).toContain(absent);
  });
});

describe.skipIf(skipReason)(suite('WebGPU faults'), () => {
  it("a validation error (a buffer destroyed behind the pool's back) is a WebGpuError with Dawn's message; the backend goes on", async () => {
    const pair = await openPair();
    try {
      const x = pair.webgpu.full([600_000], 1);
      (x.view.buffer as WebGpuBuffer).segment.buffer.destroy();
      using z = pair.webgpu.exp(x);
      const err = await z.toArray().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WebGpuError);
      expect((err as WebGpuError).kind).toBe('validation');
      expect((err as WebGpuError).operation).toMatch(/readAsync \(submitting .*exp.*runs none of them\)/);
      expect((err as WebGpuError).dawnMessage).toMatch(/destroyed/);
      // Work that does not touch the destroyed buffer goes on.
      using y = pair.webgpu.full([8], 2);
      expect(Array.from(await y.toArray())).toEqual(new Array(8).fill(2));
    } finally {
      closePair(pair);
    }
  });

  it('a kernel Dawn cannot build is a WebGpuError naming the op, the kernel and the WGSL error', async () => {
    const pair = await openPair();
    try {
      // poke.wgsl stores through `stbits_out`; a role named otherwise leaves it undefined.
      const broken: KernelSpec = { key: 'broken', op: 'brokenOp', files: ['poke.wgsl'], roles: [{ name: 'x', dtype: 'i32', write: true }], params: [['mask', 'u32'], ['value', 'u32']] };
      using t = pair.webgpu.zeros([4], 'i32');
      let err: unknown;
      try {
        pair.backend.dispatcher.run(broken, [t.view], [0, 0], [1]);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(WebGpuError);
      expect((err as WebGpuError).operation).toBe('brokenOp');
      expect((err as WebGpuError).dawnMessage).toMatch(/stbits_out/);
      expect((err as WebGpuError).dawnMessage).toContain('kernel broken');
      expect(Array.from(await t.toArray())).toEqual([0, 0, 0, 0]);
    } finally {
      closePair(pair);
    }
  });

  it("Dawn's out-of-memory on a new segment: the pool empties its cache, retries, then reports it with Dawn's message", async () => {
    const pair = await openPair();
    try {
      const { device, globals } = pair.backend.dev;
      const createBuffer = device.createBuffer;
      let refusals = 0;
      device.createBuffer = function (this: GPUDevice, descriptor: GPUBufferDescriptor) {
        const buffer = createBuffer.call(this, descriptor);
        if (descriptor.size >= 2 ** 24) {
          refusals++;
          const error = new (globals.GPUOutOfMemoryError as unknown as new (message: string) => GPUError)('simulated: the device heap is full');
          device.dispatchEvent(new (globals as unknown as { GPUUncapturedErrorEvent: typeof GPUUncapturedErrorEvent }).GPUUncapturedErrorEvent('uncapturederror', { error }));
        }
        return buffer;
      };
      const small = pair.backend.alloc(1024);
      pair.backend.free(small);
      const err = (() => {
        try {
          pair.backend.alloc(2 ** 24);
        } catch (e) {
          return e;
        }
      })();
      device.createBuffer = createBuffer;
      expect(err).toBeInstanceOf(WebGpuOutOfMemoryError);
      expect((err as WebGpuOutOfMemoryError).code).toBe('OUT_OF_MEMORY');
      expect((err as WebGpuOutOfMemoryError).dawnMessage).toBe('simulated: the device heap is full');
      expect(refusals, 'tried again after emptying the cache').toBe(2);
      expect(pair.backend.memoryStats().cachedBytes).toBe(0);
      // The device is fine: smaller allocations go on.
      using t = pair.webgpu.full([16], 5);
      expect((await t.toArray())[15]).toBe(5);
    } finally {
      closePair(pair);
    }
  });

  it('after a device loss every call is refused with WebGpuDeviceLostError, and a pending read rejects', async () => {
    const pair = await openPair();
    const backend = pair.backend;
    using x = pair.webgpu.randn([128, 128], { seed: 1 });
    using y = pair.webgpu.matmul(x, x);
    const pending = y.toArray();
    backend.dev.device.destroy();
    await expect(pending).rejects.toBeInstanceOf(WebGpuDeviceLostError);
    await backend.dev.lostPromise;
    expect(() => pair.webgpu.exp(x)).toThrow(WebGpuDeviceLostError);
    expect(() => backend.alloc(64)).toThrow(WebGpuDeviceLostError);
    expect(() => y.toArraySync()).toThrow(/device was lost/);
    await expect(y.toArray()).rejects.toBeInstanceOf(WebGpuDeviceLostError);
    // Disposing a lost backend is quiet.
    expect(() => closePair(pair)).not.toThrow();
  });

  it('a synchronous wait past syncTimeoutMs is a WebGpuTimeoutError; asynchronous reads go on', async () => {
    // A microsecond: no device runs a product, copies it out and maps the copy in that time.
    const pair = await openPair({ syncTimeoutMs: 0.001 });
    try {
      const side = busySide(pair);
      using a = pair.webgpu.randn([side, side], { seed: 2 });
      using product = pair.webgpu.matmul(a, a);
      expect(() => product.toArraySync()).toThrow(WebGpuTimeoutError);
      expect((await product.toArray()).length).toBe(side * side);
    } finally {
      closePair(pair);
    }
  });

  it('a disposed backend refuses work with DisposedError', async () => {
    const pair = await openPair();
    const buffer = pair.backend.alloc(16);
    closePair(pair);
    expect(() => pair.backend.alloc(16)).toThrow(DisposedError);
    expect(() => pair.backend.fill(makeView(buffer, 'f32', [4]), 1)).toThrow(DisposedError);
    expect(() => pair.backend.free(buffer)).not.toThrow();
  });
});
