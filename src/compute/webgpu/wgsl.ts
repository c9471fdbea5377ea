/**
 * WGSL programs from the sources under `kernels/wgsl/`: what one kernel specialisation is
 * ({@link KernelSpec}), and the module text of a specialisation for a given binding layout.
 *
 * Every tensor a kernel touches is a *role* (x, out, ...). Views live inside large pool
 * segments (one GPUBuffer each), and WebGPU refuses two writable bindings of overlapping ranges
 * and a buffer bound both read-only and writable in one dispatch, so the binding layout is one
 * `read_write` binding per distinct segment ("slot"), and roles in the same segment share it.
 * Each role reaches its elements through generated accessors (`ld_x(i)`, `st_out(i, v)`, ...)
 * that add the view's element offset, passed in the uniform with the kernel's parameters.
 *
 * Storage is 32-bit words: f16/bf16 elements are halves of a word, loaded by shift and stored
 * with atomicAnd/atomicOr (another invocation may write the other half at the same time), so a
 * slot holding a written 16-bit role is an `array<atomic<u32>>`. Where the device has
 * shader-f16, a slot whose roles are all f16 is an `array<f16>` instead: native 16-bit loads and
 * stores (the values still come and go through f32, and the f32 → f16 rounding is still ours:
 * WGSL leaves the rounding of its conversion open).
 *
 * A spec may ask for 16-byte slots (`vec4`): every slot is then an `array<vec4<u32>>`, each f32
 * role also gets `ld4_x(i)` / `st4_out(i, v)` on its i-th run of four elements (the host passes
 * only views whose element offset is a multiple of 4), and scalar loads read one component;
 * such slots take no scalar stores (a store to one component is a read-modify-write of the
 * whole vector on some shader compilers), so every role of the spec is 32-bit.
 *
 * Sources may hold `//#if NAME` / `//#else` / `//#endif` lines (NAME from the spec's flags,
 * `!NAME` negated) and `{{NAME}}` placeholders (from its constants).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DType } from '../core/dtype.js';

/** A tensor a kernel reads or writes. */
export interface KernelRole {
  readonly name: string;
  readonly dtype: DType;
  /** The kernel stores into it. */
  readonly write?: boolean;
}

/** Scalar types of kernel parameters. */
export type ParamType = 'u32' | 'i32' | 'f32';

/** One kernel specialisation: sources, roles and parameters. */
export interface KernelSpec {
  /** Unique among specialisations (the pipeline cache key, with the binding layout). */
  readonly key: string;
  /** The op it serves, for labels and error messages. */
  readonly op: string;
  /** Files of `kernels/wgsl/`, libraries first; the last holds `main`. */
  readonly files: readonly string[];
  readonly flags?: Readonly<Record<string, boolean>>;
  readonly consts?: Readonly<Record<string, string | number>>;
  readonly roles: readonly KernelRole[];
  readonly params: readonly (readonly [string, ParamType])[];
  /** Uses subgroup builtins (`enable subgroups;`). */
  readonly subgroups?: boolean;
  /** Slots of 16-byte words: `ld4_`/`st4_` accessors for f32 roles (see the module comment). */
  readonly vec4?: boolean;
}

/** Most 4-byte uniform fields a kernel may have (zero, role offsets, parameters): one 256-byte binding. */
export const MAX_UNIFORM_FIELDS = 64;

/** The library every kernel gets. */
const PRELUDE = ['common.wgsl'];

/** `kernels/wgsl/` of the package: this file is three levels below the root in `src/` and in `dist/`. */
export function defaultWgslDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'kernels', 'wgsl');
}

const texts = new Map<string, string>();

function readSource(dir: string, file: string): string {
  const path = join(dir, file);
  let text = texts.get(path);
  if (text === undefined) {
    text = readFileSync(path, 'utf8');
    texts.set(path, text);
  }
  return text;
}

/** Applies `//#if` blocks and `{{NAME}}` placeholders. */
export function preprocess(text: string, flags: Readonly<Record<string, boolean>>, consts: Readonly<Record<string, string | number>>, file: string): string {
  const out: string[] = [];
  // Each open block: whether its current branch is kept, and whether the enclosing one is.
  const stack: { keep: boolean; outer: boolean }[] = [];
  let keep = true;
  for (const line of text.split('\n')) {
    const directive = /^\s*\/\/#(if|else|endif)\b\s*(!?)(\w*)/.exec(line);
    if (directive) {
      const [, kind, negate, name] = directive;
      if (kind === 'if') {
        if (!(name! in flags)) throw new Error(`${file}: //#if ${name} names no flag of this kernel`);
        const value = flags[name!]! !== (negate === '!');
        stack.push({ keep: value, outer: keep });
        keep = keep && value;
      } else if (kind === 'else') {
        const top = stack.at(-1);
        if (!top) throw new Error(`${file}: //#else without //#if`);
        top.keep = !top.keep;
        keep = top.outer && top.keep;
      } else {
        const top = stack.pop();
        if (!top) throw new Error(`${file}: //#endif without //#if`);
        keep = top.outer;
      }
      continue;
    }
    if (keep) out.push(line);
  }
  if (stack.length > 0) throw new Error(`${file}: unclosed //#if`);
  return out.join('\n').replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    const value = consts[name];
    if (value === undefined) throw new Error(`${file}: {{${name}}} has no value in this kernel`);
    return String(value);
  });
}

const IS_16 = (d: DType) => d === 'f16' || d === 'bf16';

/** How a slot's words are declared: plain 32-bit words, atomic ones, or f16 elements. */
export type SlotKind = 'u32' | 'atomic' | 'f16';

/**
 * The kind of each slot: `f16` when native f16 storage is allowed and every role in it is f16,
 * else `atomic` when it holds a written 16-bit role, else `u32`.
 */
export function slotKinds(spec: KernelSpec, slots: readonly number[], nativeF16 = false): SlotKind[] {
  const count = slots.reduce((m, s) => Math.max(m, s + 1), 0);
  const kinds: SlotKind[] = [];
  for (let s = 0; s < count; s++) {
    const roles = spec.roles.filter((_, i) => slots[i] === s);
    if (nativeF16 && roles.every((r) => r.dtype === 'f16')) kinds.push('f16');
    else kinds.push(roles.some((r) => r.write && IS_16(r.dtype)) ? 'atomic' : 'u32');
  }
  return kinds;
}

/** The accessors of one role bound to `slot` of 16-byte words. */
function vec4Accessors(role: KernelRole, slot: number): string {
  const r = role.name;
  const buf = `S${slot}`;
  const lines = [`fn bits_${r}(i: u32) -> u32 { let e = P.o_${r} + i; return ${buf}[e >> 2u][e & 3u]; }`];
  const decode = { f32: 'bitcast<f32>(b)', i32: 'i32_to_f32(bitcast<i32>(b))' }[role.dtype as 'f32' | 'i32'];
  lines.push(`fn ld_${r}(i: u32) -> f32 { let b = bits_${r}(i); return ${decode}; }`);
  if (role.dtype === 'i32') lines.push(`fn ldi_${r}(i: u32) -> i32 { return bitcast<i32>(bits_${r}(i)); }`);
  if (role.dtype === 'f32') {
    lines.push(`fn ld4_${r}(i: u32) -> vec4<f32> { return bitcast<vec4<f32>>(${buf}[(P.o_${r} >> 2u) + i]); }`);
    if (role.write) lines.push(`fn st4_${r}(i: u32, v: vec4<f32>) { ${buf}[(P.o_${r} >> 2u) + i] = bitcast<vec4<u32>>(v); }`);
  }
  return lines.join('\n');
}

/** The accessors of one role bound to `slot`. */
function roleAccessors(role: KernelRole, slot: number, kind: SlotKind): string {
  const r = role.name;
  const buf = `S${slot}`;
  const load = (w: string) => (kind === 'atomic' ? `atomicLoad(&${buf}[${w}])` : `${buf}[${w}]`);
  const lines: string[] = [];
  if (kind === 'f16') {
    // Element bits through a vec2<f16> pair (bitcasts move bits, conversions would round).
    lines.push(`fn bits_${r}(i: u32) -> u32 { return bitcast<u32>(vec2<f16>(${buf}[P.o_${r} + i], 0.0h)); }`);
    if (role.write) {
      lines.push(
        `fn stbits_${r}(i: u32, b: u32) { ${buf}[P.o_${r} + i] = bitcast<vec2<f16>>(b).x; }`,
        `fn stbits2_${r}(i: u32, b0: u32, b1: u32) { stbits_${r}(i, b0); stbits_${r}(i + 1u, b1); }`,
      );
    }
  } else if (IS_16(role.dtype)) {
    lines.push(`fn bits_${r}(i: u32) -> u32 { let e = P.o_${r} + i; return (${load('e >> 1u')} >> ((e & 1u) << 4u)) & 0xffffu; }`);
    if (role.write) {
      lines.push(
        `fn stbits_${r}(i: u32, b: u32) { let e = P.o_${r} + i; let s = (e & 1u) << 4u; ` +
          `atomicAnd(&${buf}[e >> 1u], ~(0xffffu << s)); atomicOr(&${buf}[e >> 1u], b << s); }`,
        `fn stbits2_${r}(i: u32, b0: u32, b1: u32) { let e = P.o_${r} + i; ` +
          `if ((e & 1u) == 0u) { atomicStore(&${buf}[e >> 1u], b0 | (b1 << 16u)); } else { stbits_${r}(i, b0); stbits_${r}(i + 1u, b1); } }`,
      );
    }
  } else {
    lines.push(`fn bits_${r}(i: u32) -> u32 { return ${load(`P.o_${r} + i`)}; }`);
    if (role.write) {
      const store = kind === 'atomic' ? `atomicStore(&${buf}[P.o_${r} + i], b);` : `${buf}[P.o_${r} + i] = b;`;
      lines.push(`fn stbits_${r}(i: u32, b: u32) { ${store} }`, `fn stbits2_${r}(i: u32, b0: u32, b1: u32) { stbits_${r}(i, b0); stbits_${r}(i + 1u, b1); }`);
    }
  }
  const decode = { f32: 'bitcast<f32>(b)', f16: 'f16_to_f32(b)', bf16: 'bf16_to_f32(b)', i32: 'i32_to_f32(bitcast<i32>(b))' }[role.dtype];
  if (kind === 'f16') lines.push(`fn ld_${r}(i: u32) -> f32 { return f32(${buf}[P.o_${r} + i]); }`);
  else lines.push(`fn ld_${r}(i: u32) -> f32 { let b = bits_${r}(i); return ${decode}; }`);
  if (role.dtype === 'i32') lines.push(`fn ldi_${r}(i: u32) -> i32 { return bitcast<i32>(bits_${r}(i)); }`);
  if (role.write) {
    const encode = { f32: 'bitcast<u32>(v)', f16: 'f32_to_f16(v)', bf16: 'f32_to_bf16(v)', i32: 'bitcast<u32>(f32_to_i32(v))' }[role.dtype];
    const encode0 = encode.replace('(v)', '(v0)');
    const encode1 = encode.replace('(v)', '(v1)');
    lines.push(
      `fn enc_${r}(v: f32) -> u32 { return ${encode}; }`,
      `fn st_${r}(i: u32, v: f32) { stbits_${r}(i, ${encode}); }`,
      `fn st2_${r}(i: u32, v0: f32, v1: f32) { stbits2_${r}(i, ${encode0}, ${encode1}); }`,
    );
    if (role.dtype === 'i32') lines.push(`fn sti_${r}(i: u32, v: i32) { stbits_${r}(i, bitcast<u32>(v)); }`);
  }
  return lines.join('\n');
}

/** Uniform fields of a spec, in order: the hidden zero, each role's element offset, then the parameters. */
export function uniformFields(spec: KernelSpec): (readonly [string, ParamType])[] {
  return [['zero', 'u32'], ...spec.roles.map((r) => [`o_${r.name}`, 'u32'] as const), ...spec.params];
}

/**
 * The module text of `spec` with its roles bound to `slots` (slot index per role, slots
 * numbered from 0 in order of first use); the uniform is the binding after the last slot.
 * `nativeF16`: the device has shader-f16 and f16-only slots may use it.
 */
export function composeWgsl(spec: KernelSpec, slots: readonly number[], nativeF16 = false, dir: string = defaultWgslDir()): string {
  const kinds = slotKinds(spec, slots, spec.vec4 ? false : nativeF16);
  if (spec.vec4 && spec.roles.some((r) => r.dtype !== 'f32' && r.dtype !== 'i32')) throw new Error(`${spec.key}: 16-byte slots take 32-bit roles only`);
  const fields = uniformFields(spec);
  if (fields.length > MAX_UNIFORM_FIELDS) throw new Error(`${spec.key}: ${fields.length} uniform fields, at most ${MAX_UNIFORM_FIELDS}`);
  const parts: string[] = [];
  if (kinds.includes('f16')) parts.push('enable f16;');
  if (spec.subgroups) parts.push('enable subgroups;');
  parts.push(`struct Params {\n${fields.map(([n, t]) => `  ${n}: ${t},`).join('\n')}\n}`);
  parts.push(`@group(0) @binding(${kinds.length}) var<uniform> P: Params;`);
  const element: Record<SlotKind, string> = { u32: 'u32', atomic: 'atomic<u32>', f16: 'f16' };
  kinds.forEach((kind, s) => parts.push(`@group(0) @binding(${s}) var<storage, read_write> S${s}: array<${spec.vec4 ? 'vec4<u32>' : element[kind]}>;`));
  spec.roles.forEach((role, i) => parts.push(spec.vec4 ? vec4Accessors(role, slots[i]!) : roleAccessors(role, slots[i]!, kinds[slots[i]!]!)));
  const flags = spec.flags ?? {};
  const consts = spec.consts ?? {};
  for (const file of [...PRELUDE, ...spec.files]) parts.push(preprocess(readSource(dir, file), flags, consts, file));
  return parts.join('\n\n');
}
