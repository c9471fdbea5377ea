import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generateTables, headersNeeded } from '../../../scripts/tables/generate.js';
import { headerLocations } from '../../../scripts/tables/headers.js';
import { FILE_SPECS } from '../../../scripts/tables/table-specs.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const locations = headerLocations();

describe('tables generated from the C headers', () => {
  for (const spec of FILE_SPECS) {
    const missing = headersNeeded([spec])
      .map((id) => locations[id])
      .filter((header) => !existsSync(header.path));
    const title =
      missing.length === 0
        ? `${spec.path} is what scripts/generate-tables.ts makes of the headers`
        : `${spec.path}: not checked, ${missing.map((h) => `${h.path} is missing (${h.name} comes with ${h.providedBy})`).join('; ')}`;
    it.skipIf(missing.length > 0)(title, () => {
      const [generated] = generateTables(locations, [spec]);
      const checkedIn = readFileSync(join(root, spec.path), 'utf8');
      expect(checkedIn, `${spec.path} is stale: run npx tsx scripts/generate-tables.ts`).toBe(generated!.text);
    });
  }

  it('keeps only generated files in the generated folders', () => {
    const folders = [...new Set(FILE_SPECS.map((spec) => dirname(spec.path)))];
    const present = folders.flatMap((folder) => readdirSync(join(root, folder)).map((file) => `${folder}/${file}`));
    expect(present.sort()).toEqual(FILE_SPECS.map((spec) => spec.path).sort());
  });
});
