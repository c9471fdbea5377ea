/** A fenced code block of a Markdown document. */
export interface CodeBlock {
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The fence's info string's first word, e.g. `ts`. */
  readonly language: string;
  readonly code: string;
  /** What it needs to run, from an `<!-- needs: cuda, ... -->` comment on the line before the fence. */
  readonly needs: readonly string[];
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)/;
const NEEDS = /^\s*<!--\s*needs:\s*(.*?)\s*-->\s*$/;

/** Every fenced block of `markdown`, in order. An unclosed fence is an error, not a silently lost block. */
export function extractCodeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    const close = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    const end = lines.findIndex((text, j) => j > i && close.test(text));
    if (end < 0) throw new Error(`line ${i + 1}: code fence ${fence} is never closed`);
    const needs = NEEDS.exec(lines[i - 1] ?? '')?.[1];
    blocks.push({
      line: i + 1,
      language: open[2]!,
      code: lines.slice(i + 1, end).join('\n'),
      needs: needs ? needs.split(',').map((need) => need.trim()).filter((need) => need.length > 0) : [],
    });
    i = end;
  }
  return blocks;
}
