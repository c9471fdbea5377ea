import { Device } from '../driver/device.js';
import { InvalidArgumentError } from '../errors.js';

/** What NVRTC produces: a CUBIN for one real GPU arch, or PTX the driver compiles at load time. */
export type OutputKind = 'cubin' | 'ptx';

/** A GPU architecture spelled the way NVRTC takes it. */
export interface ParsedArch {
  /** `sm` names real hardware (CUBIN); `compute` a virtual arch (PTX). */
  readonly kind: 'sm' | 'compute';
  /** Compute capability as one number: 90 for 9.0, 120 for 12.0. */
  readonly number: number;
  /** True for the arch-specific variant (`sm_90a`): Hopper-only instructions, runs on exactly that arch. */
  readonly specific: boolean;
}

const ARCH_SPELLING = /^(sm|compute)_(\d{2,3})(a?)$/;

/**
 * Parses `sm_90`, `sm_90a`, `compute_80` and the like.
 * @throws InvalidArgumentError for any other spelling.
 */
export function parseArch(spelling: string): ParsedArch {
  const match = typeof spelling === 'string' ? ARCH_SPELLING.exec(spelling) : null;
  if (!match) {
    throw new InvalidArgumentError(
      `unknown GPU arch ${JSON.stringify(spelling)}: expected sm_XY, sm_XYa or compute_XY (e.g. 'sm_90', 'sm_90a', 'compute_80')`,
    );
  }
  return { kind: match[1] as 'sm' | 'compute', number: Number(match[2]), specific: match[3] === 'a' };
}

/** Writes an arch back in NVRTC's spelling. */
export function formatArch(arch: ParsedArch): string {
  return `${arch.kind}_${arch.number}${arch.specific ? 'a' : ''}`;
}

/** What the arch decision needs to know about the compiler and the device. */
export interface ArchContext {
  /** `sm_XY` numbers NVRTC supports (`nvrtcGetSupportedArchs`). */
  readonly supported: readonly number[];
  /** NVRTC's major version (arch-specific `a` targets need 12 or later). */
  readonly nvrtcMajor: number;
  /** The target device's arch (e.g. `sm_90`); asked only when the decision needs it. */
  readonly deviceArch: () => string;
}

/** The arch and output a compile will use. */
export interface ResolvedArch {
  /** The value of `--gpu-architecture`, e.g. `sm_90` or `compute_90`. */
  readonly arch: string;
  readonly output: OutputKind;
}

/**
 * Decides the arch and output kind of a compile.
 *
 * - No arch: the device's own, clamped to the highest arch NVRTC supports that
 *   is not above it. A CUBIN only runs on its own major version, so when NVRTC
 *   knows no arch of the device's major (a device newer than the compiler), the
 *   output becomes PTX for the highest supported arch (the driver compiles it
 *   at load time), or, where CUBIN was asked for explicitly, the call is refused.
 * - An explicit arch is used as given; it must be one NVRTC supports. `sm_XY`
 *   with PTX output becomes `compute_XY`; `compute_XY` implies PTX.
 * - `sm_XYa` only on request, only with NVRTC 12+, and only when the device is
 *   exactly that arch (such code runs nowhere else).
 */
export function resolveArch(request: { arch?: string; output?: OutputKind }, context: ArchContext): ResolvedArch {
  if (request.output !== undefined && request.output !== 'cubin' && request.output !== 'ptx') {
    throw new InvalidArgumentError(`output must be 'cubin' or 'ptx', not ${JSON.stringify(request.output)}`);
  }
  return request.arch === undefined
    ? defaultArch(request.output, context)
    : explicitArch(parseArch(request.arch), request.output, context);
}

function explicitArch(arch: ParsedArch, output: OutputKind | undefined, context: ArchContext): ResolvedArch {
  const resolvedOutput = output ?? (arch.kind === 'compute' ? 'ptx' : 'cubin');
  if (arch.kind === 'compute' && resolvedOutput === 'cubin') {
    throw new InvalidArgumentError(
      `${formatArch(arch)} is a virtual arch and yields PTX only; ask for sm_${arch.number} to get a CUBIN`,
    );
  }
  if (!context.supported.includes(arch.number)) {
    throw new InvalidArgumentError(
      `NVRTC ${context.nvrtcMajor}.x cannot compile for ${formatArch(arch)}; it supports ${listArchs(context.supported)}`,
    );
  }
  if (arch.specific) {
    if (context.nvrtcMajor < 12) {
      throw new InvalidArgumentError(
        `${formatArch(arch)} needs NVRTC 12 or later (arch-specific targets); this is NVRTC ${context.nvrtcMajor}.x`,
      );
    }
    const device = parseArch(queryDeviceArch(context, `${formatArch(arch)} was requested`));
    if (device.number !== arch.number) {
      throw new InvalidArgumentError(
        `${formatArch(arch)} code runs only on compute capability ${capability(arch.number)}, ` +
          `but the device is sm_${device.number}`,
      );
    }
  }
  const kind = resolvedOutput === 'ptx' ? 'compute' : 'sm';
  return { arch: formatArch({ ...arch, kind }), output: resolvedOutput };
}

function defaultArch(output: OutputKind | undefined, context: ArchContext): ResolvedArch {
  const device = parseArch(queryDeviceArch(context, 'no arch was given'));
  const notAbove = context.supported.filter((n) => n <= device.number);
  if (notAbove.length === 0) {
    throw new InvalidArgumentError(
      `NVRTC ${context.nvrtcMajor}.x cannot target the device (sm_${device.number}); it supports ${listArchs(context.supported)}`,
    );
  }
  const highest = Math.max(...notAbove);
  if (output === 'ptx') return { arch: `compute_${highest}`, output: 'ptx' };
  const sameMajor = notAbove.filter((n) => major(n) === major(device.number));
  if (sameMajor.length > 0) return { arch: `sm_${Math.max(...sameMajor)}`, output: 'cubin' };
  if (output === 'cubin') {
    throw new InvalidArgumentError(
      `NVRTC ${context.nvrtcMajor}.x supports no sm_${major(device.number)}x arch, so it cannot build a CUBIN ` +
        `for the device (sm_${device.number}); ask for PTX or use a newer NVRTC`,
    );
  }
  return { arch: `compute_${highest}`, output: 'ptx' };
}

function queryDeviceArch(context: ArchContext, why: string): string {
  try {
    return context.deviceArch();
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new InvalidArgumentError(
      `${why} and the current CUDA device could not be queried (${reason}); pass arch explicitly, e.g. 'sm_80'`,
    );
  }
}

function major(archNumber: number): number {
  return Math.floor(archNumber / 10);
}

function capability(archNumber: number): string {
  return `${major(archNumber)}.${archNumber % 10}`;
}

function listArchs(supported: readonly number[]): string {
  return supported.map((n) => `sm_${n}`).join(', ') || '(none)';
}

/** The arch of the current context's device (else device 0's), e.g. `sm_90`. */
export function currentDeviceArch(): string {
  return Device.current().arch;
}
