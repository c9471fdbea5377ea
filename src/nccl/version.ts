import { getVersion, type NcclVersion } from './raw/version.js';

export type { NcclVersion };

/** The version of the NCCL that loaded (ncclGetVersion); throws LibraryNotFoundError when none did. */
export function ncclVersion(): NcclVersion {
  return getVersion();
}
