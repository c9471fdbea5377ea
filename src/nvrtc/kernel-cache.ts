import { randomBytes } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { crc32 } from 'node:zlib';
import { InvalidArgumentError } from '../errors.js';

/** What the cache keeps per compiled program. */
export interface KernelCacheEntry {
  /** CUBIN bytes, or PTX bytes with their terminating NUL. */
  readonly image: Uint8Array;
  /** Name expression → mangled name. */
  readonly loweredNames: Readonly<Record<string, string>>;
  /** The compiler's log (warnings). */
  readonly log: string;
}

/**
 * Where entries live: `disk` (with an in-memory layer in front), `memory` (the
 * folder was not writable), or `off` (`GPUCOMPUTE_CACHE=0`).
 */
export type KernelCacheMode = 'disk' | 'memory' | 'off';

/** Counters since the cache was made. */
export interface KernelCacheStats {
  hits: number;
  misses: number;
  diskHits: number;
  memoryHits: number;
  writes: number;
  /** The folder entries go to (also reported in memory and off modes: the one that is not used). */
  dir: string;
  mode: KernelCacheMode;
}

/**
 * Receives the cache's debug messages: entries it refused (not a regular file,
 * too large, damaged) and why it left the disk. A GpuCompute `logger` function fits.
 */
export type KernelCacheLogger = (level: 'debug', message: string) => void;

export interface KernelCacheOptions {
  /** Folder of the on-disk entries; default `GPUCOMPUTE_CACHE_DIR`, else {@link defaultKernelCacheDir}. */
  dir?: string;
  /** False keeps nothing (every lookup misses); default: unless `GPUCOMPUTE_CACHE` is `0`/`false`/`off`. */
  enabled?: boolean;
  /** Most entries held in memory (oldest-used dropped first); default 512. */
  memoryEntries?: number;
  /** Where debug messages go; default nowhere. */
  logger?: KernelCacheLogger;
}

/**
 * The platform's cache folder for compiled kernels: `$XDG_CACHE_HOME` or
 * `~/.cache` + `gpucompute/kernels` on Linux, `~/Library/Caches/gpucompute/kernels`
 * on macOS, `%LOCALAPPDATA%\gpucompute\Cache\kernels` on Windows.
 */
export function defaultKernelCacheDir(): string {
  const env = process.env;
  if (process.platform === 'win32') {
    return join(env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'gpucompute', 'Cache', 'kernels');
  }
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'gpucompute', 'kernels');
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'gpucompute', 'kernels');
}

// Entry file: MAGIC, u32 LE header length, UTF-8 JSON header, image bytes.
const MAGIC = Buffer.from('GPUCKRN1', 'latin1');
const ENTRY_SUFFIX = '.kernel';
const TEMP_SUFFIX = '.tmp';

/**
 * The largest entry file read or written: 256 MiB. An entry is one program
 * compiled for one arch. This library's largest are about 290 KB (layernorm
 * bf16, an sm_80 CUBIN from NVRTC 11.8) and 120 KB (softmax, a gfx90a code
 * object); 256 MiB, 16 M SASS instructions at 16 bytes each (sm_70 on), leaves
 * three orders of magnitude for heavily templated programs and for PTX text,
 * yet bounds what a bogus entry can make a lookup read.
 */
const MAX_ENTRY_BYTES = 256 * 2 ** 20;

/**
 * Age after which a temporary file is taken as abandoned by a writer that was
 * killed before its rename. A write of the largest entry takes seconds even on
 * a slow network folder; the margin covers clock skew between its hosts.
 */
const STALE_TEMP_MS = 60 * 60 * 1000;

/**
 * Flags to open an entry with. No symlink is followed (entries are only ever
 * files this cache renamed into place, and opening what a link points to, a
 * device say, can have effects); `O_NONBLOCK` makes opening a FIFO return at
 * once instead of waiting for a writer (on a regular file it changes nothing);
 * `O_NOCTTY` keeps a terminal from becoming the process's controlling one.
 * Windows has none of these (and no FIFOs on disk): 0 there.
 */
const ENTRY_READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

interface EntryHeader {
  key: string;
  imageLength: number;
  imageCrc32: number;
  loweredNames: Record<string, string>;
  log: string;
}

/**
 * A cache of compiled programs keyed by `kernelCacheKey`, in the manner of
 * CuPy's: one file per entry in a cache folder, written to a temporary file in
 * the same folder and renamed into place, so concurrent processes never see a
 * partial entry (the last writer of equal content wins), and a process killed
 * mid-write leaves only its temporary file, which lookups never read and a
 * later writer removes once it is an hour old. Each entry carries its
 * key, the image's length and its CRC-32 (cheap enough to check on every
 * disk hit), so a truncated or corrupted file (what a crash of the machine
 * can leave, as nothing is fsynced) reads as a miss and is rewritten by the
 * next compile, as is anything at an entry's path that is not a regular file
 * or is larger than 256 MiB. A map in front of the disk makes a
 * repeated hit in one process cost microseconds.
 */
export class KernelCache {
  /** Where entries live now; `disk` falls back to `memory` if a write fails. */
  get mode(): KernelCacheMode {
    return this.#mode;
  }
  /** The on-disk folder (set in memory mode too: the one that was refused). */
  readonly dir: string;
  /** Why the cache is not on disk, when it is not. */
  get fallbackReason(): string | undefined {
    return this.#fallbackReason;
  }

  #mode: KernelCacheMode;
  #fallbackReason: string | undefined;
  readonly #memory = new Map<string, KernelCacheEntry>();
  readonly #memoryEntries: number;
  readonly #stats = { hits: 0, misses: 0, diskHits: 0, memoryHits: 0, writes: 0 };
  readonly #logger: KernelCacheLogger | undefined;
  /** Whether this instance has looked for abandoned temporary files yet (once, before its first write). */
  #sweptTemps = false;

  constructor(options: KernelCacheOptions = {}) {
    this.#memoryEntries = options.memoryEntries ?? 512;
    this.#logger = options.logger;
    const enabled = options.enabled ?? !isDisabledByEnv();
    this.dir = options.dir ?? (process.env.GPUCOMPUTE_CACHE_DIR || defaultKernelCacheDir());
    if (!enabled) {
      this.#mode = 'off';
      this.#fallbackReason = 'disabled';
      return;
    }
    try {
      makeFolder(this.dir);
      accessSync(this.dir, constants.W_OK);
      this.#mode = 'disk';
    } catch (err) {
      this.#mode = 'memory';
      this.#fallbackReason = `cache folder ${this.dir} is not writable: ${errorText(err)}`;
      this.#debug(`memory-only: ${this.#fallbackReason}`);
    }
  }

  static #shared: KernelCache | undefined;

  /** The process-wide cache `Program` uses by default, configured from the environment on first use. */
  static shared(): KernelCache {
    KernelCache.#shared ??= new KernelCache();
    return KernelCache.#shared;
  }

  /** The entry for `key`, or `undefined` (counted as a miss). The returned image is a copy the caller may keep. */
  get(key: string): KernelCacheEntry | undefined {
    checkKey(key);
    if (this.#mode === 'off') {
      this.#stats.misses++;
      return undefined;
    }
    const inMemory = this.#memory.get(key);
    if (inMemory) {
      this.#remember(key, inMemory);
      this.#stats.hits++;
      this.#stats.memoryHits++;
      return copyEntry(inMemory);
    }
    const onDisk = this.#mode === 'disk' ? this.#read(key) : undefined;
    if (onDisk) {
      this.#remember(key, onDisk);
      this.#stats.hits++;
      this.#stats.diskHits++;
      return copyEntry(onDisk);
    }
    this.#stats.misses++;
    return undefined;
  }

  /** Stores an entry (in memory, and on disk in disk mode). */
  set(key: string, entry: KernelCacheEntry): void {
    checkKey(key);
    if (this.#mode === 'off') return;
    const kept = copyEntry(entry);
    this.#remember(key, kept);
    if (this.#mode === 'disk') {
      try {
        this.#write(key, kept);
      } catch (err) {
        // Kept in memory all the same; later entries stay there too.
        this.#mode = 'memory';
        this.#fallbackReason = `writing to ${this.dir} failed: ${errorText(err)}`;
        this.#debug(`memory-only from now on: ${this.#fallbackReason}`);
      }
    }
    this.#stats.writes++;
  }

  /** Hit/miss counters, where entries live, and the folder. */
  stats(): KernelCacheStats {
    return { ...this.#stats, dir: this.dir, mode: this.#mode };
  }

  /**
   * Drops every entry: the in-memory ones and the entry files in its folder,
   * and temporary files abandoned over an hour ago. Other files are left alone,
   * recent temporary files included (another process may be about to rename
   * one into place).
   */
  clear(): void {
    this.#memory.clear();
    if (this.#mode !== 'disk') return;
    for (const name of readdirSync(this.dir)) {
      if (name.endsWith(ENTRY_SUFFIX)) rmSync(join(this.dir, name), { force: true });
    }
    this.#removeStaleTemps();
  }

  #remember(key: string, entry: KernelCacheEntry): void {
    // Re-inserting moves the key to the end, so the map's first key is the least recently used.
    this.#memory.delete(key);
    this.#memory.set(key, entry);
    if (this.#memory.size > this.#memoryEntries) this.#memory.delete(this.#memory.keys().next().value!);
  }

  #path(key: string): string {
    return join(this.dir, `${key}${ENTRY_SUFFIX}`);
  }

  /**
   * The entry on disk, or `undefined` for a missing or refused one. Opens the
   * path once and judges the open descriptor, so what is read is what was
   * checked: a FIFO, device, folder or symlink at the path, or a file above
   * {@link MAX_ENTRY_BYTES}, is refused unread (a FIFO would block the read, a
   * device like /dev/zero would never end it).
   */
  #read(key: string): KernelCacheEntry | undefined {
    const path = this.#path(key);
    let fd: number;
    try {
      fd = openSync(path, ENTRY_READ_FLAGS);
    } catch (err) {
      // ELOOP: a symlink, refused by O_NOFOLLOW.
      if (errorCode(err) !== 'ENOENT') this.#debug(`refused entry ${path}: ${errorText(err)}`);
      return undefined;
    }
    try {
      const stat = fstatSync(fd);
      if (!stat.isFile()) {
        this.#debug(`refused entry ${path}: not a regular file`);
        return undefined;
      }
      if (stat.size > MAX_ENTRY_BYTES) {
        this.#debug(`refused entry ${path}: ${stat.size} bytes, larger than the ${MAX_ENTRY_BYTES} an entry may have`);
        return undefined;
      }
      // Its own memory, not a slice of Node's shared pool: the entry may be kept in the memory layer.
      const file = Buffer.allocUnsafeSlow(stat.size);
      let filled = 0;
      while (filled < file.length) {
        const n = readSync(fd, file, filled, file.length - filled, filled);
        if (n === 0) break; // shrunk since fstat: decodes as truncated
        filled += n;
      }
      const entry = decodeEntry(file.subarray(0, filled), key);
      if (!entry) this.#debug(`refused entry ${path}: truncated, corrupted or written for another key`);
      return entry;
    } catch (err) {
      this.#debug(`refused entry ${path}: ${errorText(err)}`);
      return undefined;
    } finally {
      closeSync(fd);
    }
  }

  #write(key: string, entry: KernelCacheEntry): void {
    const header: EntryHeader = {
      key,
      imageLength: entry.image.length,
      imageCrc32: crc32(entry.image),
      loweredNames: { ...entry.loweredNames },
      log: entry.log,
    };
    const json = Buffer.from(JSON.stringify(header), 'utf8');
    const size = MAGIC.length + 4 + json.length + entry.image.length;
    if (size > MAX_ENTRY_BYTES) {
      // It would be refused when read: keep it in memory only.
      this.#debug(`not writing entry ${key}: ${size} bytes, larger than the ${MAX_ENTRY_BYTES} an entry may have`);
      return;
    }
    if (!this.#sweptTemps) {
      this.#sweptTemps = true;
      this.#removeStaleTemps();
    }
    const length = Buffer.alloc(4);
    length.writeUInt32LE(json.length);
    const temp = join(this.dir, `.${key}.${process.pid}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
    try {
      // 'wx': a fresh file, never through whatever might already sit at that name.
      writeFileSync(temp, Buffer.concat([MAGIC, length, json, entry.image]), { flag: 'wx' });
      // Replaces whatever is at the entry's path (a damaged file, a FIFO, a symlink) in one step.
      renameSync(temp, this.#path(key));
    } catch (err) {
      rmSync(temp, { force: true });
      throw err;
    }
  }

  /** Removes temporary files older than {@link STALE_TEMP_MS}: writers killed before their rename. */
  #removeStaleTemps(): void {
    const now = Date.now();
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch (err) {
      this.#debug(`could not list ${this.dir} for abandoned temporary files: ${errorText(err)}`);
      return;
    }
    for (const name of names) {
      if (!name.startsWith('.') || !name.endsWith(TEMP_SUFFIX)) continue;
      const path = join(this.dir, name);
      try {
        if (now - lstatSync(path).mtimeMs < STALE_TEMP_MS) continue;
        rmSync(path, { force: true });
        this.#debug(`removed abandoned temporary file ${path}`);
      } catch (err) {
        // Renamed or removed by another process meanwhile, or not ours to remove.
        if (errorCode(err) !== 'ENOENT') this.#debug(`could not remove ${path}: ${errorText(err)}`);
      }
    }
  }

  #debug(message: string): void {
    this.#logger?.('debug', `kernel cache: ${message}`);
  }
}

/**
 * Creates `dir` and its missing parents one level at a time, stopping at the
 * first failure. Not `mkdirSync(dir, { recursive: true })`: Node 20 reads an
 * ENOENT from mkdir as "a parent is missing", creates the parent (EEXIST,
 * fine) and retries the child, forever where the parent exists but refuses
 * the child with ENOENT, as procfs does (`/proc/x`: 100% CPU, never returns).
 */
function makeFolder(dir: string): void {
  const missing: string[] = [];
  let at = resolve(dir);
  let stat = statSync(at, { throwIfNoEntry: false });
  while (!stat) {
    missing.push(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
    stat = statSync(at, { throwIfNoEntry: false });
  }
  if (stat && !stat.isDirectory()) throw new Error(`${at} is not a folder`);
  for (const level of missing.reverse()) {
    try {
      mkdirSync(level);
    } catch (err) {
      // Another process may have made it meanwhile; anything else ends the walk.
      if (errorCode(err) !== 'EEXIST' || !statSync(level).isDirectory()) throw err;
    }
  }
}

/** Reads an entry file; `undefined` for anything malformed, truncated, corrupted or stored under another key. */
function decodeEntry(file: Buffer, key: string): KernelCacheEntry | undefined {
  const start = MAGIC.length + 4;
  if (file.length < start || !file.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const headerLength = file.readUInt32LE(MAGIC.length);
  if (start + headerLength > file.length) return undefined;
  let header: EntryHeader;
  try {
    header = JSON.parse(file.toString('utf8', start, start + headerLength)) as EntryHeader;
  } catch {
    return undefined;
  }
  const image = file.subarray(start + headerLength);
  if (
    header.key !== key ||
    header.imageLength !== image.length ||
    header.imageCrc32 !== crc32(image) ||
    typeof header.log !== 'string' ||
    typeof header.loweredNames !== 'object' ||
    header.loweredNames === null
  ) {
    return undefined;
  }
  // A view into the freshly read file: callers get copies, so it is never shared.
  return {
    image: new Uint8Array(image.buffer, image.byteOffset, image.length),
    loweredNames: header.loweredNames,
    log: header.log,
  };
}

function copyEntry(entry: KernelCacheEntry): KernelCacheEntry {
  return { image: entry.image.slice(), loweredNames: { ...entry.loweredNames }, log: entry.log };
}

/** Keys become file names: letters, digits, `-` and `_` only (`kernelCacheKey` gives hex). */
function checkKey(key: string): void {
  if (typeof key !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(key)) {
    throw new InvalidArgumentError(`kernel cache key must be 1-128 letters, digits, '-' or '_', not ${JSON.stringify(key)}`);
  }
}

function isDisabledByEnv(): boolean {
  return ['0', 'false', 'off', 'no'].includes((process.env.GPUCOMPUTE_CACHE ?? '').trim().toLowerCase());
}

function errorCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
