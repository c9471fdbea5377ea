/**
 * The environment NCCL must run with here. NVLink SHARP ("NVLS", multicast objects made with
 * cuMulticastCreate) is kept off: on a shared host, a multicast object that a crashed or killed
 * process leaves behind can take the node's GPUs out of service until an administrator resets
 * them. NCCL reads its variables when it initialises, so this library sets them in
 * `process.env` before it loads NCCL, and every child process it or its examples start gets them
 * too ({@link ncclSafeEnv}). Nothing in this library calls cuMulticastCreate.
 */

/** The variables and the values this library imposes on NCCL. */
export const NCCL_SAFE_ENV: Readonly<Record<string, string>> = Object.freeze({ NCCL_NVLS_ENABLE: '0' });

/** Sets {@link NCCL_SAFE_ENV} in this process's environment (a value the user set is overridden). */
export function applyNcclSafeEnv(env: NodeJS.ProcessEnv = process.env): void {
  Object.assign(env, NCCL_SAFE_ENV);
}

/**
 * `env` (default: this process's) with {@link NCCL_SAFE_ENV} on top: the environment to give a
 * child process that may load NCCL (`child_process.spawn(..., { env: ncclSafeEnv({ ...extra }) })`).
 */
export function ncclSafeEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, ...NCCL_SAFE_ENV };
}
