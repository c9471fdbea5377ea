import { nccl } from '../bindings.js';
import { checkNccl } from '../nccl-error.js';
import { out } from './out-params.js';

/** NCCL's version, decoded from ncclGetVersion's code. */
export interface NcclVersion {
  major: number;
  minor: number;
  patch: number;
  /** The code itself, e.g. 22703 for 2.27.3 (NCCL_VERSION_CODE). */
  code: number;
}

/** ncclGetVersion. */
export function getVersion(): NcclVersion {
  checkNccl(nccl.ncclGetVersion(out.i32), 'ncclGetVersion');
  return decodeVersion(out.i32[0]!);
}

/** NCCL_VERSION_CODE → its parts: X·1000 + Y·100 + Z up to 2.8, X·10000 + Y·100 + Z from 2.9 on. */
export function decodeVersion(code: number): NcclVersion {
  const base = code >= 10000 ? 10000 : 1000;
  const major = Math.floor(code / base);
  return { major, minor: Math.floor((code % base) / 100), patch: code % 100, code };
}
