/**
 * Turns the headers' Doxygen member comments into TSDoc text: comment
 * decoration and hard wraps removed, Doxygen markup rewritten (`\p x` and
 * `\c x` as code, `::cuFoo` and `#hipFoo` links as plain names, `\n` and
 * `<br>` as paragraph breaks), deprecation made a `@deprecated` tag.
 * A Doxygen command it does not know is an error, so none leaks into the docs.
 */

/** A member's documentation. */
export interface DocText {
  /** Paragraphs of plain text, each on one line. */
  readonly paragraphs: readonly string[];
  /** Set when the member is deprecated: the paragraphs of the header's note on it (possibly none). */
  readonly deprecated: readonly string[] | undefined;
}

/**
 * @param docs - the raw text of the member's doc comments, in order.
 * @param markedDeprecated - a plain `// Deprecated` comment marked the member.
 */
export function docText(docs: readonly string[], markedDeprecated: boolean, where: string): DocText {
  const paragraphs: string[] = [];
  let deprecated: string[] | undefined = markedDeprecated ? [] : undefined;
  for (const doc of docs) {
    const [before, after] = splitOnce(undecorate(doc), /\\deprecated\b/);
    paragraphs.push(...toParagraphs(before, where));
    if (after !== undefined) deprecated = toParagraphs(after, where);
  }
  // cuda.h marks some members only in prose ("Deprecated, use …", "… Deprecated. Use instead …").
  if (deprecated === undefined && paragraphs.some((p) => /(?:^|[.!?]\s)Deprecated\b/.test(p))) deprecated = [];
  return { paragraphs, deprecated };
}

/** Strips `*` margins of block comments, keeping line breaks. */
function undecorate(doc: string): string {
  return doc
    .split('\n')
    .map((line) => line.replace(/^\s*\*(?!\*)\s?/, '').trim())
    .join('\n');
}

function toParagraphs(text: string, where: string): string[] {
  return text
    .replace(/\\n\b/g, '\n\n')
    .replace(/<br\s*\/?>/gi, '\n\n')
    .split(/\n\s*\n/)
    .map((p) => inline(p.replace(/\s+/g, ' ').trim(), where))
    .filter((p) => p !== '');
}

/** Rewrites Doxygen's inline markup. */
function inline(text: string, where: string): string {
  const out = text
    .replace(/\\[pc]\s+([\w*[\]]+(?:\.[\w*[\]]+)*)/g, '`$1`')
    .replace(/\\ref\s+(\w+)/g, '$1')
    .replace(/(^|[^\w:])::(?=\w)/g, '$1')
    .replace(/(^|[\s(])#(?=[A-Za-z_])/g, '$1')
    // Markdown would read `__constant__` as bold.
    .replace(/(^|[\s(])(__\w+__)(?=[\s,.)]|$)/g, '$1`$2`');
  const unknown = /[\\@][A-Za-z]\w*/.exec(out);
  if (unknown) throw new Error(`${where}: unknown Doxygen command ${unknown[0]} in: ${text}`);
  return out;
}

function splitOnce(text: string, separator: RegExp): [string, string | undefined] {
  const match = separator.exec(text);
  return match ? [text.slice(0, match.index), text.slice(match.index + match[0].length)] : [text, undefined];
}
