import koffi from 'koffi';
import { InvalidArgumentError } from '../errors.js';

/**
 * Kernel arguments with explicit C types, and their packing into the
 * `void *kernelParams[]` that cuLaunchKernel reads.
 *
 * A bare JS number is refused everywhere: it cannot say whether it is an
 * `int`, a `float` or an address, and guessing wrong corrupts memory silently.
 */

/** The C type of one scalar kernel argument. `ptr` is a device address (8 bytes). */
export type ScalarType = 'i32' | 'u32' | 'i64' | 'u64' | 'f32' | 'f64' | 'ptr';

/**
 * A slot type of a declared signature (`Kernel.bind`): a scalar, or `tensorMap`, a CUtensorMap
 * passed by value (`const __grid_constant__ CUtensorMap`), given as a Uint8Array of its 128
 * bytes. Only the CUDA driver's launchers take `tensorMap` slots.
 */
export type ArgType = ScalarType | 'tensorMap';

/** The size of a CUtensorMap, the value of a `tensorMap` slot. */
export const TENSOR_MAP_BYTES = 128;
/** The alignment the driver requires of a CUtensorMap's memory. */
export const TENSOR_MAP_ALIGNMENT = 64;

/** A scalar argument tagged with its C type; build one with {@link i32}, {@link f32}, {@link ptr}... */
export class ScalarArg {
  /** @internal use the typed constructors, which validate the value. */
  constructor(
    readonly type: ScalarType,
    readonly value: number | bigint,
  ) {}
}

/** A struct passed by value (e.g. a CUtensorMap as `const __grid_constant__`), as raw bytes. */
export class BytesArg {
  /** @internal use {@link bytes}. */
  constructor(
    readonly data: Uint8Array,
    readonly alignment: number,
  ) {}
}

/** Anything that stands for a device address through a `ptr` bigint, such as a DeviceBuffer. */
export interface DevicePointerLike {
  readonly ptr: bigint;
}

/** One kernel argument. Device buffers are passed as their device address. */
export type KernelArg = ScalarArg | BytesArg | DevicePointerLike;

const I32_MIN = -(2 ** 31);
const I32_MAX = 2 ** 31 - 1;
const U32_MAX = 2 ** 32 - 1;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
/** The largest u64, and device address. */
export const U64_MAX = 2n ** 64n - 1n;

/** A C `int` (int32_t). */
export function i32(value: number): ScalarArg {
  if (!Number.isInteger(value) || value < I32_MIN || value > I32_MAX) {
    throw new InvalidArgumentError(`i32(${String(value)}): not an integer in [-2^31, 2^31)`);
  }
  return new ScalarArg('i32', value);
}

/** A C `unsigned int` (uint32_t). */
export function u32(value: number): ScalarArg {
  if (!Number.isInteger(value) || value < 0 || value > U32_MAX) {
    throw new InvalidArgumentError(`u32(${String(value)}): not an integer in [0, 2^32)`);
  }
  return new ScalarArg('u32', value);
}

/** A C `long long` (int64_t): a bigint, or a number that is a safe integer. */
export function i64(value: number | bigint): ScalarArg {
  checkInteger64('i64', value, I64_MIN, I64_MAX);
  return new ScalarArg('i64', value);
}

/** A C `unsigned long long` / `size_t` (uint64_t): a bigint, or a number that is a safe integer. */
export function u64(value: number | bigint): ScalarArg {
  checkInteger64('u64', value, 0n, U64_MAX);
  return new ScalarArg('u64', value);
}

/** A C `float` (the value is rounded to single precision). */
export function f32(value: number): ScalarArg {
  if (typeof value !== 'number') throw new InvalidArgumentError(`f32(${String(value)}): not a number`);
  return new ScalarArg('f32', value);
}

/** A C `double`. */
export function f64(value: number): ScalarArg {
  if (typeof value !== 'number') throw new InvalidArgumentError(`f64(${String(value)}): not a number`);
  return new ScalarArg('f64', value);
}

/** A raw device address (a `T *` parameter). Pass DeviceBuffers directly instead where you have one. */
export function ptr(address: bigint): ScalarArg {
  if (typeof address !== 'bigint' || address < 0n || address > U64_MAX) {
    throw new InvalidArgumentError(`ptr(${String(address)}): a device address is a bigint in [0, 2^64)`);
  }
  return new ScalarArg('ptr', address);
}

/** A struct by value, copied from `data`; `alignment` is the struct's (a power of two up to 128). */
export function bytes(data: ArrayBufferView, alignment = 8): BytesArg {
  if (!Number.isInteger(alignment) || alignment < 1 || alignment > MAX_ALIGNMENT || (alignment & (alignment - 1)) !== 0) {
    throw new InvalidArgumentError(`bytes(): alignment ${alignment} is not a power of two up to ${MAX_ALIGNMENT}`);
  }
  if (data.byteLength === 0) throw new InvalidArgumentError('bytes(): an argument cannot be empty');
  return new BytesArg(new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice(), alignment);
}

function checkInteger64(name: string, value: number | bigint, min: bigint, max: bigint): void {
  const ok =
    typeof value === 'bigint'
      ? value >= min && value <= max
      : Number.isSafeInteger(value) && BigInt(value) >= min && BigInt(value) <= max;
  if (!ok) throw new InvalidArgumentError(`${name}(${String(value)}): not an integer in [${min}, ${max}]`);
}

/** The byte size of a slot type's value. */
export function slotSize(type: ArgType): number {
  return type === 'tensorMap' ? TENSOR_MAP_BYTES : type === 'i32' || type === 'u32' || type === 'f32' ? 4 : 8;
}

const SCALAR_TYPES: ReadonlySet<string> = new Set(['i32', 'u32', 'i64', 'u64', 'f32', 'f64', 'ptr']);

/** Whether `type` names a scalar slot type. */
export function isScalarType(type: unknown): type is ScalarType {
  return typeof type === 'string' && SCALAR_TYPES.has(type);
}

/** Whether `type` names a slot type of a declared signature. */
export function isArgType(type: unknown): type is ArgType {
  return type === 'tensorMap' || isScalarType(type);
}

const SLOT_BYTES = 8;
const MAX_ALIGNMENT = 128;

/**
 * @internal Typed views over one argument buffer: writes a scalar of any slot type at a byte
 * offset, as the kernel reads it (shared by {@link ArgPack} and the bound launchers' memory).
 */
export class ScalarViews {
  readonly #i32: Int32Array;
  readonly #u32: Uint32Array;
  readonly #f32: Float32Array;
  readonly #f64: Float64Array;
  readonly #u64: BigUint64Array;

  constructor(buffer: ArrayBuffer) {
    this.#i32 = new Int32Array(buffer);
    this.#u32 = new Uint32Array(buffer);
    this.#f32 = new Float32Array(buffer);
    this.#f64 = new Float64Array(buffer);
    this.#u64 = new BigUint64Array(buffer);
  }

  /** Writes `value` (checked for `type`) at byte offset `at` (8-aligned for 8-byte types). */
  write(at: number, type: ScalarType, value: number | bigint): void {
    switch (type) {
      case 'i32':
        this.#i32[at >> 2] = value as number;
        return;
      case 'u32':
        this.#u32[at >> 2] = value as number;
        return;
      case 'f32':
        this.#f32[at >> 2] = value as number;
        return;
      case 'f64':
        this.#f64[at >> 3] = value as number;
        return;
      default:
        if (typeof value === 'bigint') {
          this.#u64[at >> 3] = value; // stored modulo 2^64: two's complement for negative i64
        } else {
          // Two 32-bit halves of a safe integer, two's complement, without allocating a BigInt.
          this.#u32[at >> 2] = value >>> 0;
          this.#i32[(at >> 2) + 1] = Math.floor(value / 4294967296) | 0;
        }
    }
  }
}

/**
 * The memory one kernel's launches pass to the driver: ONE buffer holding
 * the argument values and ONE array of their addresses, both reused by every
 * launch, so packing allocates nothing. Scalars sit in 8-byte slots at fixed
 * offsets, which keeps the address array constant; only by-value structs
 * ({@link bytes}) move later slots, and then only the moved addresses are
 * rewritten.
 *
 * Not re-entrant: the driver copies the parameters during the launch call, so
 * the memory is free again as soon as the launch returns.
 */
export class ArgPack {
  #values!: ArrayBuffer;
  #base = 0; // byte offset of the 128-byte-aligned start of the value area
  #capacity = 0; // usable value bytes from #base
  #baseAddress = 0n;
  #scalars!: ScalarViews;
  #u64!: BigUint64Array;
  #bytes!: Uint8Array;
  #offsets: Int32Array; // current byte offset (from #base) of each slot
  #addresses: BigUint64Array; // what the driver reads: the address of each value
  #addressesAddress: bigint;

  /**
   * @param maxArgs - the most arguments one launch may pass.
   * @param valueBytes - initial room for values; grows when by-value structs need more.
   */
  constructor(
    readonly maxArgs = 64,
    valueBytes = maxArgs * SLOT_BYTES,
  ) {
    this.#offsets = new Int32Array(maxArgs);
    this.#addresses = new BigUint64Array(new ArrayBuffer(maxArgs * 8));
    this.#addressesAddress = koffi.address(this.#addresses.buffer);
    this.#allocate(Math.max(valueBytes, maxArgs * SLOT_BYTES));
  }

  /** The address of the `void *[]` array, as cuLaunchKernel's `kernelParams`. */
  get address(): bigint {
    return this.#addressesAddress;
  }

  /**
   * Writes typed arguments and returns {@link address}. When `paramSizes`
   * (from cuFuncGetParamInfo) is given, the count and each size must match.
   *
   * @param kernelName - names the kernel in error messages.
   */
  pack(args: readonly KernelArg[], paramSizes: readonly number[] | undefined, kernelName: string): bigint {
    const count = args.length;
    if (paramSizes !== undefined && count !== paramSizes.length) {
      throw new InvalidArgumentError(
        `${kernelName} takes ${paramSizes.length} argument${paramSizes.length === 1 ? '' : 's'}, got ${count}`,
      );
    }
    if (count > this.maxArgs) throw new InvalidArgumentError(`${kernelName}: at most ${this.maxArgs} arguments, got ${count}`);
    let cursor = 0;
    for (let i = 0; i < count; i++) {
      const arg = args[i];
      let size: number;
      if (arg instanceof ScalarArg) {
        const type = arg.type;
        size = type === 'i32' || type === 'u32' || type === 'f32' ? 4 : 8;
        this.#place(i, cursor);
        this.#scalars.write(this.#base + cursor, type, arg.value);
        cursor += SLOT_BYTES;
      } else if (arg instanceof BytesArg) {
        size = arg.data.byteLength;
        const offset = alignUp(cursor, arg.alignment);
        cursor = offset + alignUp(size, SLOT_BYTES);
        // Room for this struct and a slot for each argument after it (more structs grow again).
        const needed = cursor + (count - 1 - i) * SLOT_BYTES;
        if (needed > this.#capacity) this.#grow(needed);
        this.#place(i, offset);
        this.#bytes.set(arg.data, this.#base + offset);
      } else {
        const address = arg !== null && typeof arg === 'object' ? (arg as DevicePointerLike).ptr : undefined;
        if (typeof address !== 'bigint') throw notAnArgument(kernelName, i, arg);
        size = 8;
        this.#place(i, cursor);
        this.#u64[(this.#base + cursor) >> 3] = address;
        cursor += SLOT_BYTES;
      }
      if (paramSizes !== undefined && paramSizes[i] !== size) {
        throw new InvalidArgumentError(
          `${kernelName}: argument ${i} is ${describeArg(arg)} (${size} bytes) but the kernel's parameter ${i} is ${paramSizes[i]} bytes`,
        );
      }
    }
    return this.#addressesAddress;
  }

  /** Points slot `index` at `offset`, rewriting its address only when it moved. */
  #place(index: number, offset: number): void {
    if (this.#offsets[index] !== offset) {
      this.#offsets[index] = offset;
      this.#addresses[index] = this.#baseAddress + BigInt(offset);
    }
  }

  #allocate(capacity: number): void {
    this.#values = new ArrayBuffer(capacity + MAX_ALIGNMENT);
    const address = koffi.address(this.#values);
    this.#base = (MAX_ALIGNMENT - Number(address % BigInt(MAX_ALIGNMENT))) % MAX_ALIGNMENT;
    this.#baseAddress = address + BigInt(this.#base);
    this.#capacity = capacity;
    this.#scalars = new ScalarViews(this.#values);
    this.#u64 = new BigUint64Array(this.#values);
    this.#bytes = new Uint8Array(this.#values);
    for (let i = 0; i < this.maxArgs; i++) {
      this.#offsets[i] = i * SLOT_BYTES;
      this.#addresses[i] = this.#baseAddress + BigInt(i * SLOT_BYTES);
    }
  }

  /** Moves to a larger value area, keeping what the current pack already wrote. */
  #grow(needed: number): void {
    const old = this.#bytes.subarray(this.#base, this.#base + this.#capacity);
    const offsets = this.#offsets.slice();
    this.#allocate(Math.max(needed, this.#capacity * 2));
    this.#bytes.set(old, this.#base);
    for (let i = 0; i < this.maxArgs; i++) this.#place(i, offsets[i]!);
  }
}

/**
 * The value a declared slot of `type` stores for `value`: the number or bigint itself, or the
 * address of a DeviceBuffer in a `ptr` slot. Throws InvalidArgumentError naming the kernel, the
 * argument and what the slot needs when the value does not fit (a number in a `ptr` slot, an
 * integer out of range, a fraction in an integer slot).
 */
export function checkSlot(type: ScalarType, value: unknown, index: number, kernelName: string): number | bigint {
  if (type === 'ptr') {
    let address: unknown = value;
    if (value !== null && typeof value === 'object') address = (value as DevicePointerLike).ptr;
    if (typeof address !== 'bigint' || address < 0n || address > U64_MAX) throw badSlot(kernelName, index, type, value);
    return address;
  }
  if (type === 'f32' || type === 'f64') {
    if (typeof value !== 'number') throw badSlot(kernelName, index, type, value);
    return value;
  }
  if (type === 'i32' || type === 'u32') {
    if (
      typeof value !== 'number' ||
      !Number.isInteger(value) ||
      (type === 'i32' ? value < I32_MIN || value > I32_MAX : value < 0 || value > U32_MAX)
    ) {
      throw badSlot(kernelName, index, type, value);
    }
    return value;
  }
  const ok =
    typeof value === 'bigint'
      ? type === 'i64'
        ? value >= I64_MIN && value <= I64_MAX
        : value >= 0n && value <= U64_MAX
      : typeof value === 'number' && Number.isSafeInteger(value) && (type === 'i64' || value >= 0);
  if (!ok) throw badSlot(kernelName, index, type, value);
  return value as number | bigint;
}

/** The error for a declared-signature launch given `got` values for `count` slots. */
export function boundCountError(kernelName: string, count: number, got: number): InvalidArgumentError {
  return new InvalidArgumentError(`${kernelName} was bound to ${count} argument${count === 1 ? '' : 's'}, got ${got}`);
}

function alignUp(value: number, alignment: number): number {
  return Math.ceil(value / alignment) * alignment;
}

function describeArg(arg: KernelArg): string {
  if (arg instanceof ScalarArg) return `${arg.type}(${String(arg.value)})`;
  if (arg instanceof BytesArg) return `a ${arg.data.byteLength}-byte struct`;
  return 'a device pointer';
}

function notAnArgument(kernelName: string, index: number, value: unknown): InvalidArgumentError {
  if (typeof value === 'number' || typeof value === 'bigint') {
    return new InvalidArgumentError(
      `${kernelName}: argument ${index} is a bare ${typeof value} (${String(value)}). Say its C type: ` +
        'i32(), u32(), i64(), u64(), f32(), f64(), or ptr() for a device address.',
    );
  }
  return new InvalidArgumentError(
    `${kernelName}: argument ${index} (${describeValue(value)}) is not a kernel argument; pass a typed scalar (i32(), f32(), ptr()...), a DeviceBuffer or bytes()`,
  );
}

export function badSlot(kernelName: string, index: number, type: ArgType, value: unknown): InvalidArgumentError {
  const expected =
    type === 'tensorMap'
      ? `a Uint8Array of the map's ${TENSOR_MAP_BYTES} bytes`
      : type === 'ptr'
      ? 'a bigint device address or a DeviceBuffer (never a number)'
      : type === 'f32' || type === 'f64'
        ? 'a number'
        : type === 'i32'
          ? 'an integer in [-2^31, 2^31)'
          : type === 'u32'
            ? 'an integer in [0, 2^32)'
            : `a bigint or safe integer in the ${type} range`;
  return new InvalidArgumentError(`${kernelName}: argument ${index} is declared ${type} and needs ${expected}, got ${describeValue(value)}`);
}

function describeValue(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null || typeof value !== 'object') return String(value);
  return value.constructor?.name ?? 'an object';
}
