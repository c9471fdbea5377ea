/**
 * What works where: every GpuCompute op group against every registered backend, derived from
 * the registrations (the optional backend ops each one leaves out, and why). The README's "what
 * works where" table is this table rendered (a test keeps them equal).
 */
import type { OptionalOp } from './backend/backend.js';
import { COMPOSED_OPS } from './backend/composed-ops.js';
import type { BackendRegistration } from './backend/registration.js';
import { BACKENDS, type BackendKind } from './backends.js';

/** A group of GpuCompute ops and the optional backend ops they need. */
interface OpGroup {
  readonly ops: string;
  /** Optional backend ops every op of the group needs. */
  readonly needs: readonly OptionalOp[];
  /** An optional backend op that only speeds the group up, and how the group runs without it. */
  readonly accelerated?: { readonly op: OptionalOp; readonly without: string };
}

/** The op groups, as the README lists them. */
const OP_GROUPS: readonly OpGroup[] = [
  { ops: 'tensors, fill, cast, random, elementwise and activations, reductions, transpose', needs: [] },
  { ops: 'activationGrad', needs: ['activationGrad'] },
  { ops: 'dropout', needs: ['dropout'] },
  { ops: 'softmax / logSoftmax, layerNorm', needs: ['softmax', 'layerNorm'] },
  { ops: 'oneHot, crossEntropy with class indices, the gradients of max and min', needs: ['oneHot'] },
  { ops: 'matmul, linear', needs: ['matmul'] },
  { ops: 'attention', needs: ['attention'] },
  { ops: 'attentionBackward', needs: ['attentionBackward'] },
  { ops: 'gru, gruCell, gruRollout', needs: ['matmul', 'gruRecurrence'] },
  { ops: 'gruTraining, gruBackward', needs: ['matmul', 'gruRecurrence', 'gruBackwardRecurrence'] },
  { ops: 'svd', needs: ['matmul'], accelerated: { op: 'denseLinalg', without: 'dense steps on the host' } },
  { ops: 'SGD, AdamW (the optimizer step)', needs: ['optimizerStep'] },
  { ops: 'capture', needs: [], accelerated: { op: 'recordGraph', without: 'runs the function eagerly' } },
  { ops: 'x.to(another GpuCompute)', needs: [], accelerated: { op: 'copyFromPeer', without: 'through the host' } },
];

/** How a backend runs an op group. */
export type OpSupport =
  | { readonly status: 'native'; readonly note?: string }
  | { readonly status: 'composed'; readonly from: string }
  | { readonly status: 'unsupported'; readonly reason: string };

/** One row per op group, one cell per backend. */
export type SupportTable = readonly { readonly ops: string; readonly backends: Readonly<Partial<Record<BackendKind, OpSupport>>> }[];

/** The support table of the registered backends (aliases aside: they run another's ops). */
export function supportTable(): SupportTable {
  return OP_GROUPS.map((group) => ({
    ops: group.ops,
    backends: Object.fromEntries(runnable().map((b) => [b.kind, support(group, b.unsupported)])) as Record<BackendKind, OpSupport>,
  }));
}

function runnable() {
  return BACKENDS.filter((b) => !(b as BackendRegistration).aliasOf);
}

function support(group: OpGroup, unsupported: Readonly<Partial<Record<OptionalOp, string>>>): OpSupport {
  const missing = group.needs.filter((op) => unsupported[op] !== undefined);
  const blocking = missing.filter((op) => !(COMPOSED_OPS as readonly OptionalOp[]).includes(op));
  if (blocking.length > 0) return { status: 'unsupported', reason: blocking.map((op) => `${op}: ${unsupported[op]}`).join('; ') };
  if (missing.length > 0) return { status: 'composed', from: 'the core ops' };
  const slower = group.accelerated !== undefined && unsupported[group.accelerated.op] !== undefined;
  return slower ? { status: 'native', note: group.accelerated!.without } : { status: 'native' };
}

/** The table as markdown, one column per backend (aliases aside). */
export function renderSupportTable(table: SupportTable = supportTable()): string {
  const kinds = runnable().map((b) => b.kind);
  const titles = runnable().map((b) => b.title);
  const cell = (s: OpSupport) =>
    s.status === 'native' ? (s.note ? `yes (${s.note})` : 'yes') : s.status === 'composed' ? `yes (composed from ${s.from})` : `no (${s.reason})`;
  const lines = [`| op | ${titles.join(' | ')} |`, `|---|${kinds.map(() => '---').join('|')}|`];
  for (const row of table) lines.push(`| ${row.ops} | ${kinds.map((k) => cell(row.backends[k]!)).join(' | ')} |`);
  return lines.join('\n');
}
