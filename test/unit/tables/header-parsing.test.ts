import { describe, expect, it } from 'vitest';
import { defineConstants, enumConstants, macroValue, readHeader } from '../../../scripts/tables/c-constants.js';
import { docText } from '../../../scripts/tables/doc-text.js';

const header = (source: string) => readHeader('test.h', source);

describe('enumConstants', () => {
  it('computes implicit, referenced and operator values as C does', () => {
    const h = header(`
      typedef enum shape_enum {
        SHAPE_BEGIN = 0,
        SHAPE_A = SHAPE_BEGIN,
        SHAPE_B,
        SHAPE_C = 0x10,
        SHAPE_D,
        SHAPE_E = (1 << 31) | SHAPE_B,
        SHAPE_F = 010U,
        SHAPE_G = -1
      } shape;`);
    expect(enumConstants(h, 'shape').map((c) => [c.name, c.value, c.literal])).toEqual([
      ['SHAPE_BEGIN', 0, '0'],
      ['SHAPE_A', 0, undefined],
      ['SHAPE_B', 1, undefined],
      ['SHAPE_C', 16, '0x10'],
      ['SHAPE_D', 17, undefined],
      ['SHAPE_E', 2147483649, undefined],
      ['SHAPE_F', 8, '010'],
      ['SHAPE_G', -1, undefined],
    ]);
  });

  it('attaches leading and trailing doc comments, before or after the comma, and joins /// lines', () => {
    const h = header(`
      typedef enum __NODISCARD err {
        /** Leading of A. */
        E_A = 0, /**< Trailing of A. */
        E_B = 1  /**< Trailing of B
                      on two lines. */
      , E_C = 2,  ///< First line of C
                  ///< and its second.
        // Deprecated
        E_D = 2,
        E_E = 3   // a plain comment, not documentation
      } err_t;`);
    const byName = Object.fromEntries(enumConstants(h, 'err_t').map((c) => [c.name, c]));
    expect(byName.E_A!.docs.map((d) => d.trim())).toEqual(['Leading of A.', 'Trailing of A.']);
    expect(docText(byName.E_B!.docs, false, 'E_B').paragraphs).toEqual(['Trailing of B on two lines.']);
    expect(docText(byName.E_C!.docs, false, 'E_C').paragraphs).toEqual(['First line of C and its second.']);
    expect(byName.E_D!.markedDeprecated).toBe(true);
    expect(byName.E_E!.docs).toEqual([]);
  });

  it('reports members under #if as conditional', () => {
    const h = header(`
      typedef enum { X_A = 0,
      #if defined(INTERNAL)
        X_MAX
      #endif
      } x_t;`);
    expect(enumConstants(h, 'x_t').map((c) => [c.name, c.value, c.condition])).toEqual([
      ['X_A', 0, undefined],
      ['X_MAX', 1, '#if defined(INTERNAL)'],
    ]);
  });

  it('refuses what it cannot read exactly', () => {
    expect(() => enumConstants(header('typedef enum { A = 1 } a_t; typedef enum { B } a_t;'), 'a_t')).toThrow(/expected one typedef enum a_t, found 2/);
    expect(() => enumConstants(header('typedef enum { A = 1 } a_t;'), 'b_t')).toThrow(/found 0/);
    expect(() => enumConstants(header('typedef enum { A = B } a_t;'), 'a_t')).toThrow(/B is not an earlier member/);
    expect(() => enumConstants(header('typedef enum { A = 1.5 } a_t;'), 'a_t')).toThrow(/non-integer literal/);
    expect(() => enumConstants(header('typedef enum { A,\n#else\n B } a_t;'), 'a_t')).toThrow(/unsupported preprocessor line/);
    expect(() => enumConstants(header('typedef enum {\n#if X\n A = 1,\n#endif\n B } a_t;'), 'a_t')).toThrow(/value of B depends on whether an #if holds/);
    expect(() => enumConstants(header('typedef enum { A = 1, A = 2 } a_t;'), 'a_t')).toThrow(/A declared twice/);
  });
});

describe('defineConstants', () => {
  it('takes the run of #defines with the prefix and their docs, up to the first other line', () => {
    const h = header(`
      #define OTHER 7
      //Flags of fooCreate.
      /** Default. */
      #define fooDefault 0x0
      /** Two lines
       *  joined. */
      #define fooFast    0x1 /**< Trailing. */
      // about what follows
      /** Not a foo flag. */
      #define barDefault 0
      #define fooLate    0x4
    `);
    const run = defineConstants(h, 'foo');
    expect(run.map((c) => [c.name, c.value, c.literal])).toEqual([
      ['fooDefault', 0, '0x0'],
      ['fooFast', 1, '0x1'],
    ]);
    expect(docText(run[0]!.docs, false, 'fooDefault').paragraphs).toEqual(['Default.']);
    expect(docText(run[1]!.docs, false, 'fooFast').paragraphs).toEqual(['Two lines joined.', 'Trailing.']);
  });

  it('refuses function-like macros', () => {
    expect(() => defineConstants(header('#define fooX(a) (a)'), 'foo')).toThrow(/function-like macro/);
  });
});

describe('macroValue', () => {
  it('evaluates one #define', () => {
    expect(macroValue(header('#define CUDA_VERSION 13000\n#define CUDA_VERSION_X 1'), 'CUDA_VERSION')).toBe(13000);
    expect(() => macroValue(header('#define A 1\n#define A 2'), 'A')).toThrow(/expected one #define A, found 2/);
  });
});

describe('docText', () => {
  it('rewrites Doxygen markup as TSDoc text', () => {
    const doc = docText(
      [' * The ::CU_STREAM_WAIT_VALUE_FLUSH flag; see \\ref CUDA_MEMOP and \\p size.\\n\n * For __constant__ data, see #hipFree.<br>\n * Last.'],
      false,
      'x',
    );
    expect(doc).toEqual({
      paragraphs: ['The CU_STREAM_WAIT_VALUE_FLUSH flag; see CUDA_MEMOP and `size`.', 'For `__constant__` data, see hipFree.', 'Last.'],
      deprecated: undefined,
    });
  });

  it('makes \\deprecated, a // Deprecated mark and prose deprecation a deprecation', () => {
    expect(docText([' Blocking sync.\n \\deprecated Use SCHED_BLOCKING_SYNC.'], false, 'x')).toEqual({
      paragraphs: ['Blocking sync.'],
      deprecated: ['Use SCHED_BLOCKING_SYNC.'],
    });
    expect(docText([], true, 'x').deprecated).toEqual([]);
    expect(docText([' Deprecated, use MAX_X'], false, 'x').deprecated).toEqual([]);
    expect(docText([' Can overlap. Deprecated. Use instead ENGINES.'], false, 'x').deprecated).toEqual([]);
    expect(docText([' Not deprecated here.'], false, 'x').deprecated).toBeUndefined();
  });

  it('refuses Doxygen commands it does not know', () => {
    expect(() => docText([' See \\sa cuFoo'], false, 'E_X')).toThrow(/E_X: unknown Doxygen command \\sa/);
  });
});
