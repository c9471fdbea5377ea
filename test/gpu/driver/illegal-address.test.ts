// A kernel fault breaks the primary context for the rest of the process, so this
// test has a file (and so a worker process) of its own.
import { describe, expect, it } from 'vitest';
import {
  ContextUnusableError,
  CudaError,
  Device,
  DeviceBuffer,
  Module,
  ptr,
  Stream,
  u32,
} from '../../../src/driver/index.js';
import { gpuAvailable } from '../gpu-available.js';
import { TEST_KERNELS_PTX } from './test-kernels.js';

describe.skipIf(!gpuAvailable)('a kernel fault', () => {
  it('surfaces as CUDA_ERROR_ILLEGAL_ADDRESS and leaves the context reported unusable', async () => {
    const ctx = Device.get(0).primaryContext();
    const module = Module.load(ctx, TEST_KERNELS_PTX);
    const stream = Stream.create(ctx);
    const buffer = DeviceBuffer.alloc(ctx, 1024);
    expect(ctx.unusable).toBe(false);

    module.getFunction('store_at').launch({ grid: 1, block: 1, stream }, [ptr(0x10n)]);
    const error: unknown = await stream.synchronizeAsync().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(CudaError);
    const fault = error as CudaError;
    expect(fault.errorName).toBe('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect(fault.result).toBe(700);
    expect(fault.sticky).toBe(true);
    expect(fault.message).toMatch(/CUDA_ERROR_ILLEGAL_ADDRESS \(700\).*context is now unusable/s);
    console.log(`kernel fault reported as: ${fault.message}`);

    expect(ctx.unusable).toBe(true);
    expect(() => ctx.synchronize()).toThrow(ContextUnusableError);
    expect(() => ctx.synchronize()).toThrow(/unusable since cuStream\w+ failed with CUDA_ERROR_ILLEGAL_ADDRESS/);
    expect(() => DeviceBuffer.alloc(ctx, 16)).toThrow(ContextUnusableError);
    expect(() => buffer.copyToHost(new Uint8Array(1024))).toThrow(ContextUnusableError);
    expect(() => module.getFunction('vector_add').launch({ grid: 1, block: 32 }, [buffer, buffer, buffer, u32(8)])).toThrow(
      ContextUnusableError,
    );
    expect(() => Stream.create(ctx)).toThrow(ContextUnusableError);
    const another = Device.get(0).primaryContext();
    expect(another.unusable).toBe(true);

    // Cleaning up must not bury the original error under new ones.
    expect(() => {
      buffer.dispose();
      stream.dispose();
      module.dispose();
      another.dispose();
      ctx.dispose();
    }).not.toThrow();
  });
});
