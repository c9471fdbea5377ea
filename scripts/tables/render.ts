/**
 * Writes the TypeScript of the generated tables: `as const` objects with each
 * member's TSDoc, a union type of the values for enums (not for flag sets),
 * and optionally the codes' descriptions as data.
 */
import type { DocText } from './doc-text.js';

/** A member as it is emitted. */
export interface TableMember {
  readonly key: string;
  /** The value as written in TypeScript (the header's literal spelling where it had one). */
  readonly value: string;
  readonly doc: DocText;
}

export interface RenderedTable {
  readonly name: string;
  readonly summary: string;
  /** The C type, for the value type's doc. */
  readonly cType: string;
  readonly members: readonly TableMember[];
  readonly flags: boolean;
  readonly descriptions?: { readonly name: string; readonly summary: string; readonly entries: readonly [string, string][] };
  readonly subset?: { readonly name: string; readonly summary: string; readonly keys: readonly string[] };
}

const WIDTH = 110;

/** A whole generated file: the banner lines, then each table. */
export function renderFile(banner: readonly string[], tables: readonly RenderedTable[]): string {
  const parts = [banner.map((line) => `// ${line}`.trimEnd()).join('\n')];
  for (const table of tables) parts.push(renderTable(table));
  return `${parts.join('\n\n')}\n`;
}

function renderTable(table: RenderedTable): string {
  const lines = [docComment([table.summary], undefined, ''), `export const ${table.name} = {`];
  for (const member of table.members) {
    if (member.doc.paragraphs.length > 0 || member.doc.deprecated !== undefined) {
      lines.push(docComment(member.doc.paragraphs, member.doc.deprecated, '  '));
    }
    lines.push(`  ${member.key}: ${member.value},`);
  }
  lines.push('} as const;');
  if (!table.flags) {
    lines.push('', docComment([`A ${table.cType} value.`], undefined, ''));
    lines.push(`export type ${table.name} = (typeof ${table.name})[keyof typeof ${table.name}];`);
  }
  if (table.descriptions) {
    const { name, summary, entries } = table.descriptions;
    lines.push('', docComment([summary], undefined, ''));
    lines.push(`export const ${name}: { readonly [name in keyof typeof ${table.name}]?: string } = {`);
    for (const [key, text] of entries) lines.push(`  ${key}: ${quote(text)},`);
    lines.push('};');
  }
  if (table.subset) {
    const { name, summary, keys } = table.subset;
    lines.push('', docComment([summary], undefined, ''));
    lines.push(`export const ${name}: readonly ${table.name}[] = [`);
    for (const key of keys) lines.push(`  ${table.name}.${key},`);
    lines.push('];');
  }
  return lines.join('\n');
}

/** A TSDoc comment: on one line when it fits, else wrapped, paragraphs apart, `@deprecated` last. */
function docComment(paragraphs: readonly string[], deprecated: readonly string[] | undefined, indent: string): string {
  const blocks = [...paragraphs];
  if (deprecated) blocks.push(`@deprecated ${deprecated[0] ?? ''}`.trimEnd(), ...deprecated.slice(1));
  const single = `${indent}/** ${blocks[0]} */`;
  if (blocks.length === 1 && single.length <= WIDTH) return single;
  const body = blocks.flatMap((block, k) => [...(k > 0 ? [''] : []), ...wrap(block, WIDTH - indent.length - 3)]);
  return [`${indent}/**`, ...body.map((line) => (line ? `${indent} * ${line}` : `${indent} *`)), `${indent} */`].join('\n');
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  lines.push(line);
  return lines;
}

function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
