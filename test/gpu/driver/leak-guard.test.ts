// In a file of its own: the leak warning is emitted once per process.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { Device, DeviceBuffer, Stream } from '../../../src/driver/index.js';
import { gpuAvailable } from '../gpu-available.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

describe.skipIf(!gpuAvailable)('the leak guard', () => {
  it('frees GPU memory of collected, undisposed buffers and warns once', async () => {
    const warnings: (Error & { code?: string })[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    using ctx = Device.get(0).primaryContext();
    ctx.synchronize();
    const before = ctx.memoryInfo().free;

    (() => {
      for (let i = 0; i < 4; i++) DeviceBuffer.alloc(ctx, 64 << 20);
      Stream.create(ctx);
    })();
    expect(ctx.memoryInfo().free).toBeLessThanOrEqual(before - (256 << 20));

    for (let round = 0; round < 50 && ctx.memoryInfo().free < before - (8 << 20); round++) {
      collectGarbage();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    process.off('warning', onWarning);

    expect(ctx.memoryInfo().free).toBeGreaterThanOrEqual(before - (8 << 20));
    const leaks = warnings.filter((w) => w.code === 'GPUCOMPUTE_LEAK');
    expect(leaks).toHaveLength(1);
    expect(leaks[0]!.message).toMatch(/was garbage-collected without dispose\(\)/);
    console.log(`leak guard: ${leaks[0]!.message}`);
  });
});
