/**
 * The hand-written NCCL enum tables (src/nccl/types.ts) against the nccl.h that ships with the
 * NCCL found (the wheel's nvidia/nccl/include, or a system or toolkit include folder): every
 * value the header defines for a name of the tables is the table's, and every member of the
 * header's ncclResult_t and ncclDataType_t (aliases and sentinels aside) is in the tables. Skips
 * where no nccl.h is there. Needs no GPU.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { enumConstants, readHeader } from '../../../scripts/tables/c-constants.js';
import { probeNccl } from '../../../src/compute/cuda/probe.js';
import { NcclDataType, NcclRedOp, NcclResult } from '../../../src/nccl/types.js';

function findHeader(): string | undefined {
  const probe = probeNccl();
  const near = probe.library.path?.includes('/') ? [join(dirname(probe.library.path), '..', 'include', 'nccl.h')] : [];
  const roots = [process.env.CUDA_HOME, '/usr/local/cuda'].filter((r): r is string => !!r).map((r) => join(r, 'include', 'nccl.h'));
  return [...near, '/usr/include/nccl.h', ...roots].find((p) => existsSync(p));
}

const header = findHeader();
/** Members NCCL added after 2.10 (the oldest NCCL this library takes): an older header lacks them. */
const NEWER = new Set(['ncclRemoteError', 'ncclInProgress', 'ncclTimeout', 'ncclFloat8e4m3', 'ncclFloat8e5m2']);
const ALIASES = new Set(['ncclChar', 'ncclInt', 'ncclHalf', 'ncclFloat', 'ncclDouble', 'ncclNumResults', 'ncclNumTypes']);

describe.skipIf(!header)(`NCCL's enums against ${header ?? 'nccl.h (skipped: no nccl.h beside the NCCL found, in /usr/include or in the CUDA toolkit)'}`, () => {
  const text = header ? readFileSync(header, 'utf8') : '';
  const valueOf = (name: string) => {
    const m = new RegExp(`\\b${name}\\s*=\\s*(0x[0-9a-fA-F]+|\\d+)`).exec(text);
    return m ? Number(m[1]) : undefined;
  };

  for (const [title, table] of [['ncclResult_t', NcclResult], ['ncclDataType_t', NcclDataType], ['ncclRedOp_t', NcclRedOp]] as const) {
    it(`${title}: the table's values are the header's`, () => {
      for (const [name, value] of Object.entries(table)) {
        const inHeader = valueOf(name);
        if (inHeader === undefined) expect(NEWER.has(name), `${name} is missing from ${header}`).toBe(true);
        else expect(inHeader, name).toBe(value);
      }
    });
  }

  it("ncclResult_t and ncclDataType_t: the header's members are all in the tables", () => {
    const parsed = readHeader(header!, text.replace(/\$\{[^}]*\}/g, '0'));
    for (const [typedef, table] of [['ncclResult_t', NcclResult], ['ncclDataType_t', NcclDataType]] as const) {
      const names = enumConstants(parsed, typedef).map((c) => c.name).filter((n) => !ALIASES.has(n));
      expect(names.filter((n) => !(n in table)), typedef).toEqual([]);
    }
  });
});
