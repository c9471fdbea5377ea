/**
 * Child process of bench/launch.ts: the kernel cache as a fresh process meets
 * it. Loads the program the parent compiled into `<cache dir>`, timing NVRTC's
 * loading, the disk hit, the module load and a following in-memory hit.
 *
 * Usage: tsx bench/launch/cache-hit.ts <cache dir> <kernels.cu>
 * Prints one JSON line of milliseconds.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Device, Module } from '../../src/driver/index.js';
import { KernelCache, Program, nvrtc } from '../../src/nvrtc/index.js';
import { launchProgramOptions, secondProgramOptions } from './program-options.js';

const [cacheDir, sourcePath] = process.argv.slice(2);
if (!cacheDir || !sourcePath) {
  console.error('usage: cache-hit.ts <cache dir> <kernels.cu>');
  process.exit(2);
}

// The context is not part of a cache hit: create it first, as any user has.
const ctx = Device.get(0).primaryContext();
ctx.makeCurrent();

let t = performance.now();
nvrtc.version();
const nvrtcLoadMs = performance.now() - t;

const program = new Program(readFileSync(sourcePath, 'utf8'), { ...launchProgramOptions, cache: new KernelCache({ dir: cacheDir }) });
const hit = program.compile();
if (!hit.cacheHit) throw new Error(`expected a disk hit in ${cacheDir}, NVRTC compiled instead`);

t = performance.now();
const module = Module.load(ctx, hit.image);
module.getFunction('vector_add');
const moduleLoadMs = performance.now() - t;

const again = program.compile();
if (!again.cacheHit) throw new Error('expected an in-memory hit');

// The first disk hit of a process pays one-time costs (hashing and file-system code warming up);
// a later module's hit is what each further kernel costs.
const next = new Program(readFileSync(sourcePath, 'utf8'), { ...secondProgramOptions, cache: new KernelCache({ dir: cacheDir }) }).compile();
if (!next.cacheHit) throw new Error(`expected a disk hit for the second program in ${cacheDir}`);

console.log(JSON.stringify({ nvrtcLoadMs, diskHitMs: hit.compileMs, nextDiskHitMs: next.compileMs, moduleLoadMs, memoryHitMs: again.compileMs }));
module.dispose();
ctx.dispose();
