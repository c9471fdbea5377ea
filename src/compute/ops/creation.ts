/** Tensors from host data, uninitialised, filled with a value, or copied. */
import { InvalidArgumentError } from '../../errors.js';
import { toBf16Array, toF16Array, type DType } from '../core/dtype.js';
import { formatShape, shapeSize } from '../core/shape.js';
import { describeValue, validateDType, validateShape } from '../core/validation.js';
import type { Session } from '../tensor/session.js';
import type { Tensor } from '../tensor/tensor.js';

/** Elements accepted by `gpu.tensor`. */
export type TensorData =
  | number[]
  | Float32Array
  | Float64Array
  | Int32Array
  | Int16Array
  | Int8Array
  | Uint8Array
  | Uint16Array
  | Uint32Array;

const I32_MIN = -(2 ** 31);
const I32_MAX = 2 ** 31 - 1;

/**
 * A tensor holding `data` (row-major), of `shape` (default `[data.length]`). The dtype defaults to
 * i32 for an Int32Array and f32 otherwise; a Uint16Array with dtype f16/bf16 holds bit patterns.
 */
export function tensor<D extends DType = DType>(s: Session, data: unknown, shape: unknown, dtype: unknown): Tensor<D> {
  const op = 'tensor';
  s.assertLive();
  if (!Array.isArray(data) && !ArrayBuffer.isView(data)) {
    throw new InvalidArgumentError(`${op}: data must be an array of numbers or a typed array, got ${describeValue(data)}`);
  }
  if (data instanceof DataView || data instanceof BigInt64Array || data instanceof BigUint64Array) {
    throw new InvalidArgumentError(`${op}: data must hold numbers; ${data.constructor.name} is not accepted (convert it to a Float32Array or Int32Array)`);
  }
  const values = data as TensorData;
  if (Array.isArray(values)) checkElements(op, values);
  const resolvedShape = validateShape(op, shape === undefined ? [values.length] : shape);
  if (dtype === undefined && values instanceof Uint16Array) {
    throw new InvalidArgumentError(`${op}: pass a dtype with a Uint16Array ('f16'/'bf16' read it as bit patterns)`);
  }
  const resolvedDType = dtype === undefined ? (values instanceof Int32Array ? 'i32' : 'f32') : validateDType(op, dtype);
  if (shapeSize(resolvedShape) !== values.length) {
    throw new InvalidArgumentError(
      `${op}: ${values.length} values do not fill shape ${formatShape(resolvedShape)} (${shapeSize(resolvedShape)} elements)`,
    );
  }
  const host = toHost(op, values, resolvedDType);
  return s.produce<D>(op, resolvedShape, resolvedDType, (out) => s.backend.write(out.view.buffer, host));
}

/** A tensor of `shape` filled with `value` (rounded to the dtype; an integer for i32); `op` names it in messages. */
export function full<D extends DType = DType>(s: Session, op: string, shape: unknown, value: unknown, dtype: unknown): Tensor<D> {
  s.assertLive();
  checkScalar(op, value, validateDType(op, dtype));
  return s.produce<D>(op, shape, dtype, (out) => s.backend.fill(out.view, value));
}

/** A copy of x with its own storage. */
export function copy<D extends DType>(s: Session, x: Tensor<D>, op = 'copy'): Tensor<D> {
  s.checkTensor(op, x, 'x');
  return s.produce<D>(op, x.shape, x.dtype, (out) => s.backend.copy(out.view, x.view));
}

/** Refuses a scalar the dtype cannot hold in meaning (non-numbers; non-integers for i32). */
export function checkScalar(op: string, value: unknown, dtype: DType): asserts value is number {
  if (typeof value !== 'number') throw new InvalidArgumentError(`${op}: value must be a number, got ${describeValue(value)}`);
  if (dtype === 'i32' && (!Number.isInteger(value) || value < I32_MIN || value > I32_MAX)) {
    throw new InvalidArgumentError(`${op}: ${value} is not an i32 value (an integer in [-2^31, 2^31))`);
  }
}

/** Every element of a plain array must be a number (a string, null or boolean would silently become one). */
function checkElements(op: string, values: unknown[]): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'number') {
      throw new InvalidArgumentError(`${op}: data[${i}] must be a number, got ${describeValue(v)}`);
    }
  }
}

/** Host words for `data` in `dtype`. */
function toHost(op: string, data: TensorData, dtype: DType): ArrayBufferView {
  switch (dtype) {
    case 'f32':
      return data instanceof Float32Array ? data : Float32Array.from(data);
    case 'f16':
      return data instanceof Uint16Array ? data : toF16Array(data);
    case 'bf16':
      return data instanceof Uint16Array ? data : toBf16Array(data);
    case 'i32': {
      if (data instanceof Int32Array) return data;
      for (let i = 0; i < data.length; i++) {
        const v = data[i]!;
        if (!Number.isInteger(v) || v < I32_MIN || v > I32_MAX) {
          throw new InvalidArgumentError(`${op}: value ${v} at index ${i} is not an i32 value (an integer in [-2^31, 2^31))`);
        }
      }
      return Int32Array.from(data);
    }
  }
}
