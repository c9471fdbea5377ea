import { cuda } from '../bindings.js';
import { check } from '../cuda-error.js';
import type { CUcontext, CUdevice, CUdeviceptr, CUstream } from './handles.js';
import { out } from './out-params.js';

/** cuDeviceCanAccessPeer: whether `dev` can map memory of `peer`. */
export function deviceCanAccessPeer(dev: CUdevice, peer: CUdevice): boolean {
  check(cuda.cuDeviceCanAccessPeer(out.i32, dev, peer), 'cuDeviceCanAccessPeer');
  return out.i32[0] !== 0;
}

/** cuCtxEnablePeerAccess: lets the current context access memory of `peer`. */
export function ctxEnablePeerAccess(peer: CUcontext, flags = 0): void {
  check(cuda.cuCtxEnablePeerAccess(peer, flags), 'cuCtxEnablePeerAccess');
}

/** cuCtxDisablePeerAccess: revokes {@link ctxEnablePeerAccess}. */
export function ctxDisablePeerAccess(peer: CUcontext): void {
  check(cuda.cuCtxDisablePeerAccess(peer), 'cuCtxDisablePeerAccess');
}

/** cuMemcpyPeer: copies between the memory of two contexts. */
export function memcpyPeer(dst: CUdeviceptr, dstCtx: CUcontext, src: CUdeviceptr, srcCtx: CUcontext, bytes: number): void {
  check(cuda.cuMemcpyPeer(dst, dstCtx, src, srcCtx, bytes), 'cuMemcpyPeer');
}

/** cuMemcpyPeerAsync: {@link memcpyPeer} ordered on a stream. */
export function memcpyPeerAsync(
  dst: CUdeviceptr,
  dstCtx: CUcontext,
  src: CUdeviceptr,
  srcCtx: CUcontext,
  bytes: number,
  stream: CUstream,
): void {
  check(cuda.cuMemcpyPeerAsync(dst, dstCtx, src, srcCtx, bytes, stream), 'cuMemcpyPeerAsync');
}
