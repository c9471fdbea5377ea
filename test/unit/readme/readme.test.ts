import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpuAvailable } from '../../gpu/gpu-available.js';
import { extractCodeBlocks, type CodeBlock } from './code-blocks.js';

// Every TypeScript example in the README is type-checked against src/ and run, so the README
// cannot drift from the API. A block marked `<!-- needs: cuda -->` runs only where a CUDA device
// answers; every other block must run on the CPU backend that `auto` falls back to.

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const blocks = extractCodeBlocks(readFileSync(join(repo, 'README.md'), 'utf8')).filter((block) =>
  ['ts', 'typescript'].includes(block.language),
);
const probes: Record<string, boolean> = { cuda: gpuAvailable };
const RUN_TIMEOUT_MS = 120_000;

// Inside the repository, so that node_modules, tsconfig.json and "type": "module" apply; git-ignored.
let workDir: string;
let files: Map<CodeBlock, string>;
let diagnostics: Map<CodeBlock, string[]>;

beforeAll(() => {
  workDir = mkdtempSync(join(repo, '.readme-blocks-'));
  files = new Map(
    blocks.map((block) => {
      const file = join(workDir, `readme-line-${block.line}.ts`);
      writeFileSync(file, toSources(block.code, dirname(file)));
      return [block, file];
    }),
  );
  diagnostics = typeCheck(files);
}, 120_000);

afterAll(() => {
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

it('README.md has TypeScript examples', () => {
  expect(blocks.length).toBeGreaterThan(0);
});

for (const block of blocks) {
  describe(`README.md:${block.line}`, () => {
    it('type-checks against src/', () => {
      expect(diagnostics.get(block)!.join('\n')).toBe('');
    });

    it(`runs${block.needs.length > 0 ? ` (needs ${block.needs.join(', ')})` : ''}`, async ({ skip }) => {
      const unknown = block.needs.filter((need) => !(need in probes));
      expect(unknown, `unknown needs; known: ${Object.keys(probes).join(', ')}`).toEqual([]);
      const missing = block.needs.filter((need) => !probes[need]);
      if (missing.length > 0) skip(`needs ${missing.join(', ')}: none answers here`);
      try {
        await promisify(execFile)(process.execPath, ['--import', 'tsx', files.get(block)!], {
          cwd: repo,
          timeout: RUN_TIMEOUT_MS,
          maxBuffer: 64 << 20,
        });
      } catch (err) {
        const { stderr, message } = err as { stderr?: string; message: string };
        throw new Error(`README.md:${block.line}: the example failed\n${stderr || message}`);
      }
    }, RUN_TIMEOUT_MS + 10_000);
  });
}

/** The block with `gpucompute` and its subpaths pointing at their sources, as package.json's exports map them. */
function toSources(code: string, fromDir: string): string {
  const exportsMap = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).exports as Record<string, { import: string }>;
  let out = code;
  // From the last specifier back, so earlier positions stay valid.
  for (const literal of moduleSpecifiers(code).reverse()) {
    const name = literal.text;
    if (name !== 'gpucompute' && !name.startsWith('gpucompute/')) continue;
    const target = exportsMap[`.${name.slice('gpucompute'.length)}`]?.import;
    if (!target) throw new Error(`the README imports '${name}', which package.json does not export`);
    const source = join(repo, target.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'));
    const specifier = relative(fromDir, source).split(sep).join('/').replace(/\.ts$/, '.js');
    out = `${out.slice(0, literal.getStart())}'${specifier}'${out.slice(literal.getEnd())}`;
  }
  return out;
}

/** The string literals that name modules: imports, re-exports, `import()` and `import('x').T` types. */
function moduleSpecifiers(code: string): ts.StringLiteral[] {
  const found: ts.StringLiteral[] = [];
  const visit = (node: ts.Node): void => {
    const specifier =
      ts.isImportDeclaration(node) || ts.isExportDeclaration(node)
        ? node.moduleSpecifier
        : ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword
          ? node.arguments[0]
          : ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)
            ? node.argument.literal
            : undefined;
    if (specifier && ts.isStringLiteral(specifier)) found.push(specifier);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile('block.ts', code, ts.ScriptTarget.Latest, true));
  return found.sort((a, b) => a.getStart() - b.getStart());
}

/** Errors per block under the repository's tsconfig.json, with README line numbers (the rewrite keeps lines). */
function typeCheck(blockFiles: Map<CodeBlock, string>): Map<CodeBlock, string[]> {
  const config = ts.getParsedCommandLineOfConfigFile(join(repo, 'tsconfig.json'), { noEmit: true }, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  })!;
  const program = ts.createProgram({ rootNames: [...blockFiles.values()], options: config.options });
  const result = new Map<CodeBlock, string[]>();
  for (const [block, file] of blockFiles) {
    const found = ts.getPreEmitDiagnostics(program, program.getSourceFile(file));
    result.set(
      block,
      found.map((d) => {
        const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
        if (!d.file || d.start === undefined) return text;
        const at = d.file.getLineAndCharacterOfPosition(d.start);
        const where = d.file.fileName === file ? `README.md:${block.line + 1 + at.line}` : `${relative(repo, d.file.fileName)}:${at.line + 1}`;
        return `${where}:${at.character + 1}: ${text}`;
      }),
    );
  }
  return result;
}
