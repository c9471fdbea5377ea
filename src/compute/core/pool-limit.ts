/**
 * The pool limit: the `poolLimitBytes` option, else the `GPUCOMPUTE_POOL_LIMIT`
 * environment variable, else none. The variable takes bytes or a number with a
 * binary unit: `1073741824`, `512M`, `512MiB`, `2G`, `1.5GB` (K/M/G/T all mean
 * powers of 1024).
 */
import { InvalidArgumentError } from '../../errors.js';

export const POOL_LIMIT_ENV = 'GPUCOMPUTE_POOL_LIMIT';

const UNIT: Record<string, number> = { '': 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40 };

/** Resolves the limit in bytes, or undefined for none. */
export function resolvePoolLimit(option: number | undefined, env: NodeJS.ProcessEnv = process.env): number | undefined {
  if (option !== undefined) {
    if (!Number.isSafeInteger(option) || option <= 0) {
      throw new InvalidArgumentError(`poolLimitBytes must be a positive integer number of bytes, got ${String(option)}`);
    }
    return option;
  }
  const raw = env[POOL_LIMIT_ENV]?.trim();
  if (!raw) return undefined;
  const match = /^(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?$/i.exec(raw);
  const bytes = match ? Math.floor(Number(match[1]) * UNIT[match[2]!.toUpperCase()]!) : NaN;
  if (!Number.isSafeInteger(bytes) || bytes <= 0) {
    throw new InvalidArgumentError(`${POOL_LIMIT_ENV}=${raw} is not a size (use bytes, or e.g. 512M, 2G, 1.5GiB)`);
  }
  return bytes;
}
