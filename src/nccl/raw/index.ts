/**
 * The checked raw tier of NCCL: one function per entry point, grouped by concept, returning
 * outputs instead of taking out-parameters and throwing NcclError on failure.
 */
export * from './collectives.js';
export * from './comm.js';
export * from './group.js';
export type * from './handles.js';
export * from './version.js';
