// A kernel fault breaks the primary context for the rest of the process, so this test has a
// file (and so a worker process) of its own, as test/gpu/driver/illegal-address.test.ts does.
import { describe, expect, it } from 'vitest';
import type { CudaBackend } from '../../../src/compute/cuda/cuda-backend.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { ContextUnusableError, CudaError, Module, ptr, Stream } from '../../../src/driver/index.js';
import { TEST_KERNELS_PTX } from '../driver/test-kernels.js';
import { gpuAvailable } from '../gpu-available.js';
import { thrown } from '../../unit/compute/helpers.js';

describe.skipIf(!gpuAvailable)('a kernel that faults in the context of a GpuCompute', () => {
  it('surfaces as a named error; every later device call is refused with ContextUnusableError naming it', async () => {
    const gpu = await GpuCompute.create({ backend: 'cuda', logLevel: 'silent' });
    const x = gpu.ones([1024]);
    const ctx = (gpu.backend as CudaBackend).context;
    const module = Module.load(ctx, TEST_KERNELS_PTX);
    const stream = Stream.create(ctx);
    // A store to address 0x10: an illegal address, reported at the next synchronisation.
    module.getFunction('store_at').launch({ grid: 1, block: 1, stream }, [ptr(0x10n)]);

    const fault = thrown(() => gpu.synchronize());
    expect(fault).toBeInstanceOf(CudaError);
    expect((fault as CudaError).errorName).toBe('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect((fault as CudaError).sticky).toBe(true);
    expect(fault.message).toMatch(/CUDA_ERROR_ILLEGAL_ADDRESS \(700\).*context is now unusable/s);
    expect(ctx.unusable).toBe(true);

    const before = gpu.memoryStats();
    const later: [string, () => unknown][] = [
      ['an op on an existing tensor', () => gpu.add(x, x)],
      ['a new tensor', () => gpu.zeros([16])],
      ['a tensor from host data', () => gpu.tensor([1, 2, 3])],
      ['a read-back', () => x.toArraySync()],
      ['synchronize', () => gpu.synchronize()],
      ['a matmul', () => gpu.matmul(x.reshape([32, 32]), x.reshape([32, 32]))],
    ];
    for (const [label, call] of later) {
      const err = thrown(call);
      expect(err, label).toBeInstanceOf(ContextUnusableError);
      expect(err.message, label).toMatch(/unusable since \w+ failed with CUDA_ERROR_ILLEGAL_ADDRESS/);
    }
    await expect(x.toArray()).rejects.toBeInstanceOf(ContextUnusableError);
    // The refused ops kept nothing.
    expect(gpu.memoryStats().inUseBytes).toBe(before.inUseBytes);

    // Cleaning up must not bury the original error under new ones.
    expect(() => {
      x.dispose();
      stream.dispose();
      module.dispose();
      gpu.dispose();
    }).not.toThrow();
  });
});
