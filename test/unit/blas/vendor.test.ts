import { describe, expect, it } from 'vitest';
import { blasRefusal } from '../../../src/blas/library.js';
import { threadControl } from '../../../src/blas/threads.js';
import { identifyBlas } from '../../../src/blas/vendor.js';
import type { NativeLibrary } from '../../../src/ffi/library.js';

/**
 * A stand-in for a koffi library exporting `symbols`: the decisions made from which entry points
 * exist and what they answer, for the vendors this machine lacks (the real OpenBLAS is covered by
 * the other suites). Records the prototypes bound and the calls made, in order.
 */
function fakeLibrary(symbols: Record<string, (...args: never[]) => unknown>) {
  const log: string[] = [];
  const lib = {
    func(prototype: string) {
      const name = /([A-Za-z_]\w*)\s*\(/.exec(prototype)![1]!;
      const impl = symbols[name];
      if (!impl) throw new Error(`Cannot find function '${name}' in shared library`);
      log.push(`bind ${prototype}`);
      return (...args: never[]) => {
        log.push(`call ${name}(${args.map((a) => (Buffer.isBuffer(a) ? 'buffer' : String(a))).join(', ')})`);
        return impl(...args);
      };
    },
  } as unknown as NativeLibrary;
  return { lib, log };
}

const cblasOnly = { cblas_sgemm: () => undefined };

describe('identifyBlas', () => {
  it('tells the vendors apart by their own entry points and reads their version strings', () => {
    const mkl = fakeLibrary({
      ...cblasOnly,
      MKL_Get_Version_String: ((buffer: Buffer) => buffer.write('Intel(R) oneMKL Version 2024.2\0')) as never,
    });
    expect(identifyBlas(mkl.lib)).toEqual({ vendor: 'mkl', version: 'Intel(R) oneMKL Version 2024.2' });
    expect(identifyBlas(fakeLibrary({ ...cblasOnly, bli_info_get_version_str: () => '0.9.0' }).lib)).toEqual({ vendor: 'blis', version: '0.9.0' });
    expect(identifyBlas(fakeLibrary({ ...cblasOnly, openblas_get_config: () => 'OpenBLAS 0.3.28 Zen ' }).lib)).toEqual({
      vendor: 'openblas',
      version: 'OpenBLAS 0.3.28 Zen',
    });
    expect(identifyBlas(fakeLibrary({ ...cblasOnly, appleblas_sgeadd: () => undefined }).lib)).toEqual({ vendor: 'accelerate', version: null });
    expect(identifyBlas(fakeLibrary(cblasOnly).lib)).toEqual({ vendor: 'generic', version: null });
  });

  it('asks a library once', () => {
    const { lib, log } = fakeLibrary({ ...cblasOnly, openblas_get_config: () => 'OpenBLAS 0.3.21' });
    identifyBlas(lib);
    identifyBlas(lib);
    expect(log.filter((line) => line.startsWith('call'))).toEqual(['call openblas_get_config()']);
  });
});

describe('blasRefusal', () => {
  it('refuses a library without cblas_sgemm', () => {
    expect(blasRefusal(fakeLibrary({ sgemm_: () => undefined }).lib)).toMatch(/no cblas_sgemm/);
  });

  it('refuses ILP64 OpenBLAS and BLIS builds and takes their LP64 builds', () => {
    expect(blasRefusal(fakeLibrary({ ...cblasOnly, openblas_get_config: () => 'OpenBLAS 0.3.21 USE64BITINT DYNAMIC_ARCH' }).lib)).toMatch(/ILP64 build of OpenBLAS/);
    expect(blasRefusal(fakeLibrary({ ...cblasOnly, openblas_get_config: () => 'OpenBLAS 0.3.21 DYNAMIC_ARCH' }).lib)).toBeUndefined();
    const blis = (bits: number) => fakeLibrary({ ...cblasOnly, bli_info_get_version_str: () => '1.0', bli_info_get_blas_int_type_size: () => bits }).lib;
    expect(blasRefusal(blis(64))).toMatch(/ILP64 build of BLIS/);
    expect(blasRefusal(blis(32))).toBeUndefined();
  });

  it('pins MKL to LP64 before any other MKL call, and refuses it when the layer was already ILP64', () => {
    let layer: number | undefined;
    const mkl = (preset?: number) => {
      layer = preset;
      return fakeLibrary({
        ...cblasOnly,
        // mkl_rt keeps the first layer set, whether by this call or by an earlier MKL call.
        MKL_Set_Interface_Layer: ((asked: number) => (layer ??= asked)) as never,
        MKL_Get_Version_String: ((buffer: Buffer) => buffer.write('MKL 2020.0.4\0')) as never,
      });
    };
    const fresh = mkl();
    expect(blasRefusal(fresh.lib)).toBeUndefined();
    expect(fresh.log.filter((line) => line.startsWith('call'))).toEqual(['call MKL_Set_Interface_Layer(0)', 'call MKL_Get_Version_String(buffer, 256)']);
    expect(blasRefusal(mkl(1).lib)).toMatch(/already set to ILP64/);
  });
});

describe('threadControl', () => {
  it('uses each vendor\'s calls and reads back what the library took', () => {
    let threads = 8;
    const setGet = (set: string, get: string) => ({ [set]: ((n: number) => void (threads = Math.min(n, 4))) as never, [get]: () => threads });
    for (const [vendor, symbols] of [
      ['openblas', setGet('openblas_set_num_threads', 'openblas_get_num_threads')],
      ['mkl', setGet('MKL_Set_Num_Threads', 'MKL_Get_Max_Threads')],
      ['blis', setGet('bli_thread_set_num_threads', 'bli_thread_get_num_threads')],
    ] as const) {
      const control = threadControl(fakeLibrary(symbols).lib, vendor);
      control.set(2);
      expect(control.get()).toBe(2);
      control.set(16);
      expect(control.get(), `${vendor} reads back its cap`).toBe(4);
    }
  });

  it('binds BLIS with its own dim_t width, and reads back null when BLIS threads by ways', () => {
    for (const [bits, type] of [[64, 'int64_t'], [32, 'int32_t']] as const) {
      const { lib, log } = fakeLibrary({
        bli_info_get_int_type_size: () => bits,
        bli_thread_set_num_threads: () => undefined,
        bli_thread_get_num_threads: () => -1,
      });
      const control = threadControl(lib, 'blis');
      expect(log).toContain(`bind void bli_thread_set_num_threads(${type} threads)`);
      expect(log).toContain(`bind ${type} bli_thread_get_num_threads(void)`);
      expect(control.get()).toBeNull();
    }
  });

  it('maps Accelerate to single- or multi-threaded where macOS 15 allows, and does nothing before it', () => {
    let mode = 0;
    const { lib, log } = fakeLibrary({ BLASSetThreading: ((m: number) => ((mode = m), 0)) as never, BLASGetThreading: () => mode });
    const control = threadControl(lib, 'accelerate');
    control.set(1);
    expect(control.get()).toBe(1);
    control.set(6);
    expect(log.at(-1)).toBe('call BLASSetThreading(0)');
    expect(control.get()).toBeNull();
    const old = threadControl(fakeLibrary({}).lib, 'accelerate');
    old.set(1);
    expect(old.get()).toBeNull();
  });

  it('gives a generic CBLAS no control', () => {
    const control = threadControl(fakeLibrary(cblasOnly).lib, 'generic');
    control.set(3);
    expect(control.get()).toBeNull();
  });
});
