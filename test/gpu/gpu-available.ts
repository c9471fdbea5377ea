import { openLibcuda } from '../../src/driver/library.js';

/**
 * Whether a CUDA GPU answers: libcuda loads, `cuInit(0)` succeeds and
 * `cuDeviceGetCount` reports at least one device. False on any failure, so GPU
 * suites can `describe.skipIf(!gpuAvailable)` on machines without one (CI).
 * Deliberately independent of the driver bindings under test.
 */
export const gpuAvailable: boolean = probe();

function probe(): boolean {
  try {
    const { lib } = openLibcuda();
    const cuInit = lib.func('int cuInit(unsigned int flags)');
    const cuDeviceGetCount = lib.func('int cuDeviceGetCount(_Out_ int *count)');
    if (cuInit(0) !== 0) return false;
    const count = [0];
    if (cuDeviceGetCount(count) !== 0) return false;
    return (count[0] ?? 0) > 0;
  } catch {
    return false;
  }
}
