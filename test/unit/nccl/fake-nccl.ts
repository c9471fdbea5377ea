/**
 * Builds `fixtures/fake-nccl.c` (NCCL's entry points and ABI, no GPU) into a shared library with
 * the machine's C compiler, once per process, for the tests of the bindings. Undefined, with the
 * reason, where no compiler is installed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCE = fileURLToPath(new URL('./fixtures/fake-nccl.c', import.meta.url));

function build(): { path?: string; reason?: string } {
  if (process.platform !== 'linux') return { reason: 'the fake NCCL is built for Linux only' };
  const dir = mkdtempSync(join(tmpdir(), 'gpucompute-fake-nccl-'));
  const path = join(dir, 'libnccl.so.2');
  for (const compiler of ['cc', 'clang-19', 'clang', 'gcc']) {
    try {
      execFileSync(compiler, ['-shared', '-fPIC', '-O1', '-o', path, SOURCE], { stdio: 'pipe' });
      return { path };
    } catch {
      // the next compiler
    }
  }
  return { reason: 'no C compiler (cc, clang-19, clang, gcc) to build the fake NCCL' };
}

const built = build();

/** The fake libnccl.so.2, or undefined where it could not be built. */
export const fakeNcclPath: string | undefined = built.path;
/** Why {@link fakeNcclPath} is undefined. */
export const fakeNcclMissing: string = built.reason ?? '';
