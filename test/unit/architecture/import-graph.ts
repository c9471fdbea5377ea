import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * The import graph of the TypeScript files under one folder, and its cycles.
 * Every kind of import is an edge: static imports, `import type`, re-exports
 * and dynamic `import()`, since each ties the two files' layers together even
 * when only one of them is evaluated.
 */

/** Files are named by their path relative to the graph's root, with `/` separators. */
export interface ImportGraph {
  readonly root: string;
  /** Each file under the root (sorted) and the files it imports (sorted, no duplicates). */
  readonly edges: ReadonlyMap<string, readonly string[]>;
  /** Relative specifiers that name no file: the graph would silently miss their edges. */
  readonly unresolved: readonly { readonly from: string; readonly specifier: string }[];
}

/** One strongly connected component: its files, and chains that together cross every import inside it. */
export interface ImportCycle {
  readonly files: readonly string[];
  /** Each chain starts and ends with the same file. */
  readonly chains: readonly (readonly string[])[];
}

export function buildImportGraph(root: string): ImportGraph {
  const absRoot = resolve(root);
  const files = listTsFiles(absRoot);
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  const unresolved: { from: string; specifier: string }[] = [];
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set<string>();
    for (const { fileName: specifier } of info.importedFiles) {
      if (!/^\.\.?(\/|$)/.test(specifier)) continue; // packages and node: builtins
      const target = resolveSpecifier(dirname(file), specifier);
      if (target === undefined) unresolved.push({ from: name(absRoot, file), specifier });
      else if (known.has(target)) targets.add(name(absRoot, target));
      // A file outside the root is not part of this graph.
    }
    edges.set(name(absRoot, file), [...targets].sort());
  }
  return { root: absRoot, edges, unresolved };
}

/** Tarjan's algorithm. Components come out in reverse topological order; each one's files sorted. */
export function stronglyConnectedComponents(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    lowLink.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        lowLink.set(node, Math.min(lowLink.get(node)!, lowLink.get(next)!));
      } else if (onStack.has(next)) {
        lowLink.set(node, Math.min(lowLink.get(node)!, index.get(next)!));
      }
    }
    if (lowLink.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      components.push(component.sort());
    }
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return components;
}

/**
 * The components that hold a cycle (two or more files, or a file importing
 * itself). For each, one shortest chain per import inside the component that
 * no earlier chain crossed: breaking every chain listed breaks the component.
 */
export function importCycles(edges: ReadonlyMap<string, readonly string[]>): ImportCycle[] {
  const cycles: ImportCycle[] = [];
  for (const files of stronglyConnectedComponents(edges)) {
    const members = new Set(files);
    const inside = (from: string): string[] => (edges.get(from) ?? []).filter((to) => members.has(to));
    if (files.length === 1 && !inside(files[0]!).includes(files[0]!)) continue;
    const crossed = new Set<string>();
    const chains: string[][] = [];
    for (const from of files) {
      for (const to of inside(from)) {
        if (crossed.has(`${from}\n${to}`)) continue;
        // `to` reaches `from` because both are in the component.
        const chain = [from, ...shortestPath(to, from, inside)];
        for (let i = 0; i + 1 < chain.length; i++) crossed.add(`${chain[i]}\n${chain[i + 1]}`);
        chains.push(chain);
      }
    }
    cycles.push({ files, chains });
  }
  return cycles.sort((a, b) => a.files[0]!.localeCompare(b.files[0]!));
}

/** One paragraph per component: its files, then its chains as `a.ts → b.ts → a.ts`. */
export function formatCycles(cycles: readonly ImportCycle[]): string {
  return cycles
    .map(({ files, chains }) =>
      [`${files.length} file(s) in a cycle: ${files.join(', ')}`, ...chains.map((chain) => `  ${chain.join(' → ')}`)].join('\n'),
    )
    .join('\n\n');
}

/** Breadth-first, so the chain is as short as the imports allow; includes both ends. */
function shortestPath(start: string, goal: string, next: (node: string) => string[]): string[] {
  const cameFrom = new Map<string, string | undefined>([[start, undefined]]);
  const queue = [start];
  for (let head = 0; head < queue.length && !cameFrom.has(goal); head++) {
    for (const node of next(queue[head]!)) {
      if (cameFrom.has(node)) continue;
      cameFrom.set(node, queue[head]);
      queue.push(node);
    }
  }
  const path: string[] = [];
  for (let node: string | undefined = goal; node !== undefined; node = cameFrom.get(node)) path.unshift(node);
  return path;
}

/** `./x.js` is `./x.ts` on disk (NodeNext); an extensionless specifier is a `.ts` file or a folder's index. */
function resolveSpecifier(fromDir: string, specifier: string): string | undefined {
  const base = resolve(fromDir, specifier);
  const candidates = [
    base,
    base.replace(/\.js$/, '.ts').replace(/\.mjs$/, '.mts').replace(/\.cjs$/, '.cts'),
    `${base}.ts`,
    join(base, 'index.ts'),
  ];
  return candidates.find(isFile);
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function listTsFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...listTsFiles(path));
    else if (/\.[mc]?ts$/.test(entry.name) && !/\.d\.[mc]?ts$/.test(entry.name)) found.push(path);
  }
  return found.sort();
}

function name(root: string, file: string): string {
  return relative(root, file).split(sep).join('/');
}
