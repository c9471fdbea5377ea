/**
 * AMD GPU targets as hiprtc takes them (`--offload-arch=<target ID>`), which
 * ones a given ROCm release's compiler knows, and their wavefront size.
 *
 * Why a table: hiprtc of ROCm 5.2 aborts the whole process (no error code)
 * when asked for a target its compiler does not know, e.g. gfx940 or gfx1100,
 * so targets are checked here before the compiler sees them.
 */
import { InvalidArgumentError } from '../errors.js';

/** A parsed target ID such as `gfx90a:sramecc+:xnack-`. */
export interface GfxTarget {
  /** The processor, e.g. `gfx90a`. */
  readonly processor: string;
  /** Target features with their setting, e.g. `['sramecc+', 'xnack-']`. */
  readonly features: readonly string[];
  /** The whole target ID, as passed to `--offload-arch`. */
  readonly id: string;
}

/** Processors added to the compiler by ROCm release (HIP version major·100 + minor), each set adding to the ones before. */
const PROCESSORS_SINCE: readonly (readonly [number, readonly string[]])[] = [
  // ROCm 5.0-5.2 (checked against Debian's libamdhip64-5, ROCm 5.2.3)
  [
    500,
    [
      'gfx701', 'gfx801', 'gfx802', 'gfx803', 'gfx805', 'gfx810',
      'gfx900', 'gfx902', 'gfx904', 'gfx906', 'gfx908', 'gfx909', 'gfx90a', 'gfx90c',
      'gfx1010', 'gfx1011', 'gfx1012', 'gfx1013',
      'gfx1030', 'gfx1031', 'gfx1032', 'gfx1033', 'gfx1034', 'gfx1035', 'gfx1036',
    ],
  ],
  [503, ['gfx940', 'gfx1100', 'gfx1101', 'gfx1102', 'gfx1103']],
  [505, ['gfx941', 'gfx942']],
  [507, ['gfx1150', 'gfx1151']],
  [602, ['gfx1152', 'gfx1200', 'gfx1201']],
  [604, ['gfx950']],
];

const FEATURES = new Set(['sramecc', 'xnack']);

/**
 * Parses a target ID: a processor (`gfx` and 3-4 hex digits) and optional
 * `:feature+` / `:feature-` settings (sramecc, xnack).
 * @throws InvalidArgumentError for anything else.
 */
export function parseGfxTarget(id: string): GfxTarget {
  const parts = typeof id === 'string' ? id.trim().split(':') : [];
  const processor = parts[0] ?? '';
  if (!/^gfx[0-9a-f]{3,4}$/.test(processor)) {
    throw new InvalidArgumentError(`${JSON.stringify(id)} is not an AMD GPU target: expected e.g. gfx90a or gfx1030[:xnack-]`);
  }
  const features = parts.slice(1);
  for (const feature of features) {
    const name = feature.slice(0, -1);
    if (!FEATURES.has(name) || !/[+-]$/.test(feature)) {
      throw new InvalidArgumentError(`target ${id}: unknown feature setting "${feature}" (sramecc+/- and xnack+/- exist)`);
    }
  }
  return { processor, features, id: [processor, ...features].join(':') };
}

/** HIP_VERSION (major·10^7 + minor·10^5 + patch) as major·100 + minor. */
function releaseOf(hipVersion: number): number {
  return Math.floor(hipVersion / 10_000_000) * 100 + Math.floor((hipVersion % 10_000_000) / 100_000);
}

/** The processors the compiler of a HIP runtime of this version knows, oldest first. */
export function knownProcessors(hipVersion: number): string[] {
  const release = releaseOf(hipVersion);
  return PROCESSORS_SINCE.filter(([since]) => release >= since).flatMap(([, processors]) => processors);
}

/**
 * Checks that hiprtc of this HIP version can compile for `id`, before it is asked
 * (it may abort the process otherwise).
 * @throws InvalidArgumentError naming the target, the version and the known targets.
 */
export function checkCompilableTarget(id: string, hipVersion: number): GfxTarget {
  const target = parseGfxTarget(id);
  const known = knownProcessors(hipVersion);
  if (!known.includes(target.processor)) {
    const major = Math.floor(hipVersion / 10_000_000);
    const minor = Math.floor((hipVersion % 10_000_000) / 100_000);
    throw new InvalidArgumentError(
      `hiprtc of HIP ${major}.${minor} does not know the target ${target.processor} (some releases abort the process on one), ` +
        `so it is not asked. Known: ${known.join(', ') || 'none'}. A newer ROCm may support it.`,
    );
  }
  return target;
}

/**
 * Threads per wavefront the compiler uses by default for a processor: 64 on
 * GCN and CDNA (gfx6-gfx9, gfx90a, gfx94x), 32 on RDNA (gfx10 and later).
 */
export function defaultWavefrontSize(processor: string): 32 | 64 {
  const family = /^gfx(\d+)[0-9a-f]{2}$/.exec(processor)?.[1];
  if (family === undefined) throw new InvalidArgumentError(`${JSON.stringify(processor)} is not an AMD GPU processor name`);
  return Number(family) >= 10 ? 32 : 64;
}
