/**
 * What the `gpucompute info` probe and backend selection use to ask whether
 * an AMD GPU answers: the runtime's location and its unchecked entry points
 * (they read result codes rather than catch errors), and HIP's version format.
 */
export { hipRuntimeSpec, openHipRuntime } from './library.js';
export { hip as hipProbeFunctions } from './bindings.js';

/** HIP_VERSION-style integers (major * 10^7 + minor * 10^5 + patch) as `major.minor.patch`. */
export function formatHipVersion(version: number): string {
  const major = Math.floor(version / 10_000_000);
  const minor = Math.floor((version % 10_000_000) / 100_000);
  const patch = version % 100_000;
  return `${major}.${minor}.${patch}`;
}
