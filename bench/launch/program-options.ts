import type { ProgramOptions } from '../../src/nvrtc/index.js';

/** How bench/launch.ts and its cache-hit child compile kernels.cu: identical, so the child hits the parent's entry. */
export const launchProgramOptions: ProgramOptions = { name: 'launch_kernels.cu' };

/** A second program (same source, one more define) for timing a later module's disk hit in one process. */
export const secondProgramOptions: ProgramOptions = { ...launchProgramOptions, defines: { LAUNCH_BENCH_SECOND_MODULE: 1 } };
