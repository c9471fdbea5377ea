import type { ProgramOptions } from '../../src/nvrtc/index.js';

/** How bench/launch.ts and its cache-hit child compile kernels.cu: identical, so the child hits the parent's entry. */
export const launchProgramOptions: ProgramOptions = { name: 'launch_kernels.cu' };
