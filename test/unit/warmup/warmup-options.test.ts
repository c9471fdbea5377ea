/** The warmup's and GpuCompute's progress options refused before any work, typed and naming the option. */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../src/errors.js';
import { GpuCompute } from '../../../src/compute/gpu-compute.js';
import { warmupKernels, type WarmupOptions } from '../../../src/compute/warmup.js';
import { gpuAvailable } from '../../gpu/gpu-available.js';

async function refusal(options: unknown): Promise<Error> {
  const err = await warmupKernels(options as WarmupOptions).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidArgumentError);
  return err as Error;
}

describe('warmupKernels options', () => {
  it.each([
    [{ job: 2 }, /unknown option job; did you mean 'jobs'\?/],
    [{ jobs: 0 }, /warmupKernels: jobs must be/],
    [{ jobs: 1.5 }, /warmupKernels: jobs must be/],
    [{ ops: 'softmax' }, /warmupKernels: ops must be an array of op names, got the string "softmax"/],
    [{ ops: ['sofmax'] }, /ops has the string "sofmax", which is not one of the op names \(did you mean 'softmax'\?\)/],
    [{ dtypes: ['f64'] }, /warmupKernels: dtypes has the string "f64", which is not one of the dtypes/],
    [{ arch: 90 }, /warmupKernels: arch must be a string such as 'sm_90', got 90/],
    [{ arch: 'sm_90a' }, /warmupKernels: arch must name a device as sm_XY/],
    [{ arch: 'compute_90' }, /warmupKernels: arch must name a device as sm_XY/],
    [{ arch: 'hopper' }, /unknown GPU arch "hopper"/],
    [{ cacheDir: '' }, /warmupKernels: cacheDir must be a non-empty folder path/],
    [{ onProgress: 'yes' }, /warmupKernels: onProgress must be a function/],
    [{ logger: 3 }, /warmupKernels: logger must be a Logger or a function/],
    ['sm_90', /warmupKernels: options must be an object/],
  ])('refuses %j', async (options, message) => {
    expect((await refusal(options)).message).toMatch(message);
  });

  it.skipIf(gpuAvailable)('asks for an arch where no CUDA device answers', async () => {
    expect((await refusal({ ops: ['fill'] })).message).toMatch(/no arch was given and no CUDA device answered \(.+\); pass one, e.g. 'sm_90'/);
  });
});

describe('GpuCompute.create onProgress', () => {
  it('must be a function, and is named in the refusal', async () => {
    await expect(GpuCompute.create({ backend: 'cpu', onProgress: 'yes' as never })).rejects.toThrow(
      new InvalidArgumentError('GpuCompute.create: onProgress must be a function (event) => void, got the string "yes"'),
    );
    await expect(GpuCompute.create({ backend: 'cpu', onProgres: () => {} } as never)).rejects.toThrow(/unknown option onProgres; did you mean 'onProgress'\?/);
  });

  it('is carried by the logger the backend gets', async () => {
    const seen: string[] = [];
    const gpu = await GpuCompute.create({ backend: 'cpu', logLevel: 'silent', onProgress: (e) => seen.push(e.what) });
    try {
      gpu.logger.progress({ phase: 'compile', done: 1, what: 'fill.cu', outcome: 'done', ms: 1 });
      expect(seen).toEqual(['fill.cu']);
    } finally {
      gpu.dispose();
    }
  });
});
