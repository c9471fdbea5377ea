import { CudaResult } from './generated/result-code.js';

export { CudaResult };

const namesByCode = new Map<number, string>(Object.entries(CudaResult).map(([name, code]) => [code, name]));

/** The C name of a CUresult code, or undefined for a code this table does not know. */
export function cudaResultName(code: number): string | undefined {
  return namesByCode.get(code);
}
