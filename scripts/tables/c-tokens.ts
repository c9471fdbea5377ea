/**
 * A tokenizer for the part of C that enum declarations and `#define` lines of
 * the CUDA and HIP headers use. Comments are kept as tokens: doc comments carry
 * the member descriptions, and a plain `// Deprecated` line marks HIP's aliases.
 */

export type CToken =
  | { readonly kind: 'ident' | 'number' | 'punct' | 'string'; readonly text: string; readonly line: number }
  /** `/** … *\/` or `/// …` (leading: describes what follows), `/**< … *\/` or `///< …` (trailing: what precedes). */
  | { readonly kind: 'doc'; readonly text: string; readonly trailing: boolean; readonly line: number }
  /** A comment that is not a doc comment, its text without the delimiters. */
  | { readonly kind: 'comment'; readonly text: string; readonly line: number }
  /** A preprocessor line, continuation lines joined, comments inside it kept. */
  | { readonly kind: 'directive'; readonly text: string; readonly line: number };

const PUNCT = ['<<', '>>', '::', '...', '{', '}', '(', ')', '[', ']', ',', ';', '=', '|', '&', '+', '-', '~', '*', '/', '<', '>', '?', ':', '!', '.', '^', '%'];

/** Splits C source into tokens; `path` only names the file in errors. */
export function tokenize(source: string, path = '<source>'): CToken[] {
  const tokens: CToken[] = [];
  let i = 0;
  let line = 1;
  let atLineStart = true;
  // The last `//` doc comment, to join the next one when it continues it on the following line.
  let lineDoc: { index: number; line: number } | undefined;
  const fail = (what: string): never => {
    throw new Error(`${path}:${line}: ${what}`);
  };

  while (i < source.length) {
    const c = source[i]!;
    if (c === '\n') {
      line++;
      i++;
      atLineStart = true;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v') {
      i++;
      continue;
    }
    if (c === '\\' && source[i + 1] === '\n') {
      i += 2;
      line++;
      continue;
    }
    if (c === '#' && atLineStart) {
      const start = i;
      const startLine = line;
      // To the end of the line, through `\`-continued lines and block comments that cross a line.
      while (i < source.length && source[i] !== '\n') {
        if (source.startsWith('/*', i)) {
          const end = source.indexOf('*/', i + 2);
          if (end < 0) fail('unterminated comment');
          line += countNewlines(source, i, end);
          i = end + 2;
        } else if (source[i] === '\\' && source[i + 1] === '\n') {
          i += 2;
          line++;
        } else {
          i++;
        }
      }
      tokens.push({ kind: 'directive', text: source.slice(start, i).replace(/\\\n/g, ' '), line: startLine });
      continue;
    }
    atLineStart = false;
    if (source.startsWith('/*', i)) {
      const end = source.indexOf('*/', i + 2);
      if (end < 0) fail('unterminated comment');
      const body = source.slice(i + 2, end);
      tokens.push(commentToken(body, '*', line));
      line += countNewlines(source, i, end);
      i = end + 2;
      continue;
    }
    if (source.startsWith('//', i)) {
      let end = source.indexOf('\n', i);
      if (end < 0) end = source.length;
      const token = commentToken(source.slice(i + 2, end), '/', line);
      const previous = lineDoc && lineDoc.index === tokens.length - 1 && lineDoc.line === line - 1 ? tokens[lineDoc.index] : undefined;
      if (token.kind === 'doc' && previous?.kind === 'doc' && previous.trailing === token.trailing) {
        tokens[tokens.length - 1] = { ...previous, text: `${previous.text}\n${token.text}` };
      } else {
        tokens.push(token);
      }
      lineDoc = token.kind === 'doc' ? { index: tokens.length - 1, line } : undefined;
      i = end;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < source.length && source[j] !== c) {
        if (source[j] === '\n') fail('unterminated literal');
        j += source[j] === '\\' ? 2 : 1;
      }
      tokens.push({ kind: 'string', text: source.slice(i, j + 1), line });
      i = j + 1;
      continue;
    }
    const ident = /^[A-Za-z_]\w*/.exec(source.slice(i, i + 256));
    if (ident) {
      tokens.push({ kind: 'ident', text: ident[0], line });
      i += ident[0].length;
      continue;
    }
    const number = /^(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)[uUlLfF]*/.exec(source.slice(i, i + 64));
    if (number) {
      tokens.push({ kind: 'number', text: number[0], line });
      i += number[0].length;
      continue;
    }
    const punct = PUNCT.find((p) => source.startsWith(p, i));
    if (!punct) fail(`unexpected character ${JSON.stringify(c)}`);
    tokens.push({ kind: 'punct', text: punct!, line });
    i += punct!.length;
  }
  return tokens;
}

/**
 * Classifies a comment by its opening: `body` is what follows `/*` (marker `*`)
 * or `//` (marker `/`). `/**` and `///` open doc comments, a `<` after them makes
 * the comment describe what precedes it; `/***` rulers and `////` are plain.
 */
function commentToken(body: string, marker: '*' | '/', line: number): CToken {
  if (body.startsWith(marker) && !body.startsWith(marker + marker)) {
    const trailing = body[1] === '<';
    return { kind: 'doc', text: body.slice(trailing ? 2 : 1), trailing, line };
  }
  return { kind: 'comment', text: body, line };
}

function countNewlines(source: string, from: number, to: number): number {
  let n = 0;
  for (let k = from; k < to; k++) if (source[k] === '\n') n++;
  return n;
}
