/**
 * Regenerates the enum, attribute and result-code tables under
 * src/driver/generated/ and src/hip/generated/ from cuda.h and the HIP headers.
 *
 *   npx tsx scripts/generate-tables.ts           write the files
 *   npx tsx scripts/generate-tables.ts --check   only report files that differ (exit status 1)
 *
 * The headers: cuda.h under `$CUDA_HOME/include` (default /usr/local/cuda), the
 * HIP headers of Debian's libamdhip64-dev under /usr/include/hip.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateTables } from './tables/generate.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
let stale = 0;
for (const file of generateTables()) {
  const path = join(root, file.path);
  const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  if (current === file.text) continue;
  stale++;
  if (check) {
    console.log(`${file.path} is stale against ${file.headers.map((h) => h.path).join(', ')}`);
  } else {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, file.text);
    console.log(`wrote ${file.path}`);
  }
}
if (stale === 0) console.log('generated tables are current');
if (check && stale > 0) process.exitCode = 1;
