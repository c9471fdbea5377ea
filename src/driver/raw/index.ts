/**
 * The checked raw tier: one function per driver entry point, grouped by
 * concept, returning outputs instead of taking out-parameters and throwing
 * CudaError on failure. Handles are bigints (see handles.ts).
 */
export * from './context.js';
export * from './device.js';
export * from './event.js';
export * from './function.js';
export * from './graph.js';
export type * from './handles.js';
export * from './init.js';
export * from './launch.js';
export * from './memory.js';
export * from './module.js';
export * from './occupancy.js';
export * from './peer.js';
export * from './stream.js';
