/**
 * The checked raw tier of the HIP runtime: one function per entry point,
 * grouped by concept, returning outputs and throwing HipError on failure.
 */
export * from './device.js';
export * from './event.js';
export type * from './handles.js';
export * from './memory.js';
export * from './module.js';
export * from './stream.js';
