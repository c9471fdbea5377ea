/**
 * Reads named integer constants out of a C header: the members of an enum, or
 * a run of `#define`s that share a prefix. Values are computed as the compiler
 * would (implicit increments, references to earlier members, the operators
 * the headers use); doc comments are kept raw for doc-text.ts to clean.
 */
import { type CToken, tokenize } from './c-tokens.js';

/** One enum member or macro. */
export interface CConstant {
  /** The C name. */
  readonly name: string;
  readonly value: number;
  /** The value as written when it is a single integer literal (`0x04`), to emit the same spelling. */
  readonly literal: string | undefined;
  /** Its doc comments' raw text, in order (a member may have a leading and a trailing one). */
  readonly docs: readonly string[];
  /** A plain `// Deprecated` comment stood right before it (HIP's way of marking aliases). */
  readonly markedDeprecated: boolean;
  /** The `#if` line it is declared under, when it is (cuda.h hides internal sentinels so). */
  readonly condition: string | undefined;
}

/** A header already split into tokens. */
export interface CHeader {
  readonly path: string;
  readonly tokens: readonly CToken[];
}

/** Tokenizes a header's source; `path` names it in errors. */
export function readHeader(path: string, source: string): CHeader {
  return { path, tokens: tokenize(source, path) };
}

/**
 * The members of the enum declared as `typedef enum [tag] { … } name;`, found
 * by its typedef name. The header must declare it exactly once.
 */
export function enumConstants(header: CHeader, typedefName: string): CConstant[] {
  const { tokens, path } = header;
  const bodies: { open: number; close: number }[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (!isWord(tokens[i], 'typedef') || !isWord(tokens[i + 1], 'enum')) continue;
    let open = i + 2;
    while (open < tokens.length && !isPunct(tokens[open], '{') && !isPunct(tokens[open], ';')) open++;
    if (!isPunct(tokens[open], '{')) continue;
    const close = tokens.findIndex((t, k) => k > open && isPunct(t, '}'));
    if (close < 0) throw new Error(`${path}:${tokens[open]!.line}: an enum body without its closing }`);
    const name = tokens.slice(close + 1).find((t) => t.kind === 'ident');
    if (name?.text === typedefName) bodies.push({ open, close });
    i = close;
  }
  if (bodies.length !== 1) {
    throw new Error(`${path}: expected one typedef enum ${typedefName}, found ${bodies.length}`);
  }
  const { open, close } = bodies[0]!;
  return members(tokens.slice(open + 1, close), `${path}: enum ${typedefName}`);
}

/**
 * The `#define <prefix>…` lines from the first one on, up to the first line of
 * anything else (comments between them belong to them). Such a run is how the
 * headers group flags that have no enum (cuMemHostAlloc's, hipEventCreateWithFlags').
 */
export function defineConstants(header: CHeader, prefix: string): CConstant[] {
  const { tokens, path } = header;
  const defined = (t: CToken | undefined) => (t?.kind === 'directive' ? /^#\s*define\s+(\w+)(.*)$/s.exec(t.text) : null);
  const first = tokens.findIndex((t) => defined(t)?.[1]!.startsWith(prefix));
  if (first < 0) throw new Error(`${path}: no #define ${prefix}…`);
  const isLeadingDoc = (t: CToken | undefined) => t?.kind === 'doc' && !t.trailing;
  let start = first;
  while (start > 0 && isLeadingDoc(tokens[start - 1])) start--;

  const body: CToken[] = [];
  for (let i = start; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === 'doc' || t.kind === 'comment') {
      body.push(t);
      continue;
    }
    const match = defined(t);
    if (!match?.[1]!.startsWith(prefix)) break;
    const [, name, rest] = match;
    if (rest!.startsWith('(')) throw new Error(`${path}:${t.line}: ${name} is a function-like macro`);
    // A macro `NAME value` reads like the enum member `NAME = value`.
    body.push({ kind: 'ident', text: name!, line: t.line });
    body.push({ kind: 'punct', text: '=', line: t.line });
    body.push(...tokenize(rest!, path).map((r) => ({ ...r, line: t.line })));
    body.push({ kind: 'punct', text: ',', line: t.line });
  }
  // Comments after the last macro describe whatever follows the run.
  while (body.length > 0 && body[body.length - 1]!.kind !== 'punct') body.pop();
  return members(body, `${path}: #define ${prefix}…`);
}

/** The value of `#define name <integer expression>`, declared once in the header. */
export function macroValue(header: CHeader, name: string): number {
  const pattern = new RegExp(`^#\\s*define\\s+${name}\\b(?!\\()(.*)$`, 's');
  const found = header.tokens.flatMap((t) => (t.kind === 'directive' ? [pattern.exec(t.text)] : [])).filter((m) => m !== null);
  if (found.length !== 1) throw new Error(`${header.path}: expected one #define ${name}, found ${found.length}`);
  const expression = tokenize(found[0]![1]!, header.path).filter((t) => t.kind !== 'doc' && t.kind !== 'comment');
  return Number(evaluate(expression, new Map(), `${header.path}: ${name}`));
}

interface Pending {
  name: string;
  line: number;
  expression: CToken[];
  docs: string[];
  markedDeprecated: boolean;
  condition: string | undefined;
}

/** Parses `NAME [= expression]` items separated by commas, attaching doc comments as the header means them. */
function members(body: readonly CToken[], where: string): CConstant[] {
  const parsed: Pending[] = [];
  let leadingDocs: string[] = [];
  let markedDeprecated = false;
  let state: 'name' | 'afterName' | 'expression' = 'name';
  // Open #if lines: members under one are reported as conditional, not judged.
  const conditions: string[] = [];
  for (const t of body) {
    const fail = (what: string): never => {
      throw new Error(`${where}, line ${t.line}: ${what}`);
    };
    if (t.kind === 'directive') {
      const directive = /^#\s*(\w+)/.exec(t.text)?.[1];
      if (directive === 'if' || directive === 'ifdef' || directive === 'ifndef') conditions.push(t.text.trim());
      else if (directive === 'endif' && conditions.length > 0) conditions.pop();
      else fail(`unsupported preprocessor line inside the enum: ${t.text}`);
      continue;
    }
    if (t.kind === 'doc') {
      if (!t.trailing) leadingDocs.push(t.text);
      else if (parsed.length === 0) fail('a trailing doc comment before the first member');
      else parsed[parsed.length - 1]!.docs.push(t.text);
      continue;
    }
    if (t.kind === 'comment') {
      if (/^\s*deprecated\s*$/i.test(t.text)) markedDeprecated = true;
      continue;
    }
    if (isPunct(t, ',')) {
      if (state === 'name') fail('an empty member');
      state = 'name';
      continue;
    }
    if (state === 'name') {
      if (t.kind !== 'ident') fail(`expected a member name, found ${t.text}`);
      parsed.push({ name: t.text, line: t.line, expression: [], docs: leadingDocs, markedDeprecated, condition: conditions.at(-1) });
      leadingDocs = [];
      markedDeprecated = false;
      state = 'afterName';
    } else if (state === 'afterName') {
      if (!isPunct(t, '=')) fail(`expected = or , after ${parsed[parsed.length - 1]!.name}, found ${t.text}`);
      state = 'expression';
    } else {
      parsed[parsed.length - 1]!.expression.push(t);
    }
  }
  if (state === 'expression' && parsed[parsed.length - 1]!.expression.length === 0) {
    throw new Error(`${where}: ${parsed[parsed.length - 1]!.name} has no value after =`);
  }

  const values = new Map<string, bigint>();
  let previous = -1n;
  return parsed.map((m, k) => {
    if (values.has(m.name)) throw new Error(`${where}, line ${m.line}: ${m.name} declared twice`);
    const before = parsed[k - 1]?.condition;
    if (m.expression.length === 0 && before !== undefined && before !== m.condition) {
      throw new Error(`${where}, line ${m.line}: the value of ${m.name} depends on whether an #if holds`);
    }
    const value = m.expression.length === 0 ? previous + 1n : evaluate(m.expression, values, `${where}, line ${m.line}`);
    values.set(m.name, value);
    previous = value;
    const only = m.expression.length === 1 && m.expression[0]!.kind === 'number' ? m.expression[0]!.text : undefined;
    return {
      name: m.name,
      value: Number(value),
      literal: only?.replace(/[uUlL]+$/, ''),
      docs: m.docs,
      markedDeprecated: m.markedDeprecated,
      condition: m.condition,
    };
  });
}

/**
 * Evaluates an integer constant expression of literals, earlier names,
 * parentheses and `| & ^ << >> + - * ~`, in C's precedence. Arithmetic is
 * exact (BigInt), so `1 << 31` is 2147483648 as the headers mean it for flags.
 */
function evaluate(tokens: readonly CToken[], names: ReadonlyMap<string, bigint>, where: string): bigint {
  let pos = 0;
  const fail = (what: string): never => {
    throw new Error(`${where}: ${what} in ${tokens.map((t) => t.text).join(' ')}`);
  };
  const peek = () => tokens[pos];
  const binary = (operators: readonly string[], next: () => bigint, apply: (op: string, a: bigint, b: bigint) => bigint) => {
    let value = next();
    while (peek()?.kind === 'punct' && operators.includes(peek()!.text)) {
      const op = tokens[pos++]!.text;
      value = apply(op, value, next());
    }
    return value;
  };
  const primary = (): bigint => {
    const t = tokens[pos++];
    if (!t) return fail('an unfinished expression');
    if (t.kind === 'number') {
      const digits = t.text.replace(/[uUlL]+$/, '');
      if (!/^(?:0[xX][0-9a-fA-F]+|\d+)$/.test(digits)) fail(`a non-integer literal ${t.text}`);
      // A leading 0 makes a C literal octal.
      return /^0\d/.test(digits) ? BigInt(`0o${digits.slice(1)}`) : BigInt(digits);
    }
    if (t.kind === 'ident') return names.get(t.text) ?? fail(`${t.text} is not an earlier member`);
    if (isPunct(t, '(')) {
      const value = or();
      if (!isPunct(tokens[pos++], ')')) fail('a missing )');
      return value;
    }
    if (isPunct(t, '-')) return -primary();
    if (isPunct(t, '~')) return ~primary();
    return fail(`unexpected ${t.text}`);
  };
  const product = () => binary(['*'], primary, (_, a, b) => a * b);
  const sum = () => binary(['+', '-'], product, (op, a, b) => (op === '+' ? a + b : a - b));
  const shift = () => binary(['<<', '>>'], sum, (op, a, b) => (op === '<<' ? a << b : a >> b));
  const and = () => binary(['&'], shift, (_, a, b) => a & b);
  const xor = () => binary(['^'], and, (_, a, b) => a ^ b);
  const or = (): bigint => binary(['|'], xor, (_, a, b) => a | b);
  const value = or();
  if (pos !== tokens.length) fail(`unexpected ${tokens[pos]!.text}`);
  return value;
}

function isWord(t: CToken | undefined, word: string): boolean {
  return t?.kind === 'ident' && t.text === word;
}

function isPunct(t: CToken | undefined, p: string): boolean {
  return t?.kind === 'punct' && t.text === p;
}
