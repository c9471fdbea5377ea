import { cuda } from '../bindings.js';
import { check } from '../cuda-error.js';
import { out } from './out-params.js';

/** cuInit: initialises the driver; must precede every other call. Idempotent. */
export function init(flags = 0): void {
  check(cuda.cuInit(flags), 'cuInit');
}

/** cuDriverGetVersion: the CUDA version the driver supports, as 1000*major + 10*minor (13000 = 13.0). */
export function driverGetVersion(): number {
  check(cuda.cuDriverGetVersion(out.i32), 'cuDriverGetVersion');
  return out.i32[0]!;
}
