/**
 * HIP handles as they travel through koffi: opaque pointers as `bigint`
 * (`0n` is NULL; for streams, the null stream). Device addresses are bigints
 * too; a device is its ordinal.
 */
export type HipStreamHandle = bigint;
export type HipEventHandle = bigint;
export type HipModuleHandle = bigint;
export type HipFunctionHandle = bigint;
/** A device address. */
export type HipDevicePtr = bigint;
/** A host address (pinned memory). */
export type HipHostPtr = bigint;
