import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { buildImportGraph, formatCycles, importCycles } from './import-graph.js';

// Layers only hold if no file reaches back into a file that reaches it (DESIGN.md: "No import cycles").
const graph = buildImportGraph(fileURLToPath(new URL('../../../src', import.meta.url)));

it('resolves every relative import under src/', () => {
  expect(graph.unresolved).toEqual([]);
});

it('has no import cycles under src/', () => {
  const cycles = importCycles(graph.edges);
  expect(cycles.length, `import cycles under src/:\n\n${formatCycles(cycles)}\n`).toBe(0);
});
