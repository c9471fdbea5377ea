import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildImportGraph, formatCycles, importCycles, stronglyConnectedComponents } from './import-graph.js';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('import graph of a folder', () => {
  it('counts static, type-only, re-export and dynamic imports, and resolves .js, extensionless and folder specifiers', () => {
    const graph = buildImportGraph(fixture('acyclic'));
    expect(Object.fromEntries(graph.edges)).toEqual({
      'left.ts': ['shared/index.ts'],
      'main.ts': ['left.ts', 'right.ts'],
      'right.ts': ['shared/index.ts'],
      'shared/index.ts': ['shared/late.ts'],
      'shared/late.ts': [],
    });
    expect(graph.unresolved).toEqual([]);
    expect(importCycles(graph.edges)).toEqual([]);
  });

  it('finds each cycle, whatever kind of import closes it, and leaves files outside cycles out', () => {
    const graph = buildImportGraph(fixture('cyclic'));
    expect(graph.unresolved).toEqual([]);
    const cycles = importCycles(graph.edges);
    expect(cycles).toEqual([
      { files: ['a.ts', 'b.ts', 'c/index.ts'], chains: [['a.ts', 'b.ts', 'c/index.ts', 'a.ts']] },
      { files: ['d.ts', 'e.ts'], chains: [['d.ts', 'e.ts', 'd.ts']] },
      { files: ['self.ts'], chains: [['self.ts', 'self.ts']] },
    ]);
    expect(formatCycles(cycles)).toBe(
      [
        '3 file(s) in a cycle: a.ts, b.ts, c/index.ts',
        '  a.ts → b.ts → c/index.ts → a.ts',
        '',
        '2 file(s) in a cycle: d.ts, e.ts',
        '  d.ts → e.ts → d.ts',
        '',
        '1 file(s) in a cycle: self.ts',
        '  self.ts → self.ts',
      ].join('\n'),
    );
  });
});

describe('strongly connected components', () => {
  it('splits a graph into its components, each after the components it reaches', () => {
    const edges = new Map([
      ['a', ['b']],
      ['b', ['c', 'd']],
      ['c', ['a']],
      ['d', ['e']],
      ['e', ['d', 'f']],
      ['f', []],
    ]);
    expect(stronglyConnectedComponents(edges)).toEqual([['f'], ['d', 'e'], ['a', 'b', 'c']]);
  });

  it('lists chains that together cross every import inside a component', () => {
    // Two cycles through a hub: a → b → a and a → c → d → a, plus the chord b → d.
    const edges = new Map([
      ['a', ['b', 'c']],
      ['b', ['a', 'd']],
      ['c', ['d']],
      ['d', ['a']],
    ]);
    const [cycle, ...rest] = importCycles(edges);
    expect(rest).toEqual([]);
    expect(cycle!.files).toEqual(['a', 'b', 'c', 'd']);
    expect(cycle!.chains).toEqual([
      ['a', 'b', 'a'],
      ['a', 'c', 'd', 'a'],
      ['b', 'd', 'a', 'b'],
    ]);
    const crossed = new Set(cycle!.chains.flatMap((chain) => chain.slice(1).map((to, i) => `${chain[i]}→${to}`)));
    expect([...crossed].sort()).toEqual(['a→b', 'a→c', 'b→a', 'b→d', 'c→d', 'd→a']);
  });
});
