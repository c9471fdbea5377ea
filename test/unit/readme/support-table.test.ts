import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderSupportTable } from '../../../src/compute/support.js';

const readme = readFileSync(join(import.meta.dirname, '../../../README.md'), 'utf8');

describe("the README's support table", () => {
  it('is the registry\'s support table (regenerate it from src/compute/support.ts when a backend changes)', () => {
    const match = /<!-- support-table:[^\n]*-->\n([\s\S]*?)\n<!-- \/support-table -->/.exec(readme);
    expect(match, 'README.md lost its support-table markers').not.toBeNull();
    expect(match![1]).toBe(renderSupportTable());
  });
});
