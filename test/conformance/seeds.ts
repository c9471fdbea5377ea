/**
 * Fresh inputs on every run, and a way to replay them: one run seed, drawn per run unless
 * GPUCOMPUTE_CONFORMANCE_SEED fixes it, and per case a seed derived from the run seed and the
 * case's label. A case thus gets the same inputs on every backend whatever else runs, and every
 * assertion message names the case seed and the variable that replays the run.
 */
import { freshSeed, prng, randomValues } from '../unit/compute/helpers.js';

export const SEED_VARIABLE = 'GPUCOMPUTE_CONFORMANCE_SEED';

/** This run's seed. */
export const RUN_SEED = runSeed(process.env[SEED_VARIABLE]);

function runSeed(text: string | undefined): number {
  if (text === undefined || text.trim() === '') return freshSeed();
  const seed = Number(text);
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32) throw new Error(`${SEED_VARIABLE} must be an integer in [0, 2^32), got ${text}`);
  return seed;
}

/** FNV-1a of the label, started from the run seed. */
function caseSeed(label: string): number {
  let h = (0x811c9dc5 ^ RUN_SEED) >>> 0;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** One case: its label, its inputs (a stream of draws from its seed) and its assertion messages. */
export class Case {
  readonly label: string;
  readonly seed: number;
  readonly #next: () => number;

  /** `label` names the case independently of the backend, so every backend draws the same inputs. */
  constructor(label: string) {
    this.label = label;
    this.seed = caseSeed(label);
    this.#next = prng(this.seed);
  }

  /** A new seed from the case's stream, for helpers that draw their own inputs. */
  subSeed(): number {
    return Math.floor(this.#next() * 2 ** 32);
  }

  /** n roughly normal values scale·z + shift. */
  normal(n: number, scale = 1, shift = 0): number[] {
    return randomValues(n, this.subSeed(), scale, shift);
  }

  /** n integers uniform in [low, high]. */
  ints(n: number, low: number, high: number): number[] {
    return Array.from({ length: n }, () => low + Math.floor(this.#next() * (high - low + 1)));
  }

  /** The message of an assertion about `what`: the case, its seed, and how to replay the run. */
  msg(what: string): string {
    return `${this.label}: ${what} [case seed ${this.seed}; replay with ${SEED_VARIABLE}=${RUN_SEED}]`;
  }
}
