/**
 * The NCCL bindings and the checked raw tier against the fake libnccl (fixtures/fake-nccl.c),
 * which has NCCL's ABI and records each call's arguments: every prototype marshals what NCCL
 * expects (the 128-byte id by value, size_t counts past 2^32, pointers and streams as 64-bit
 * addresses), and every failure becomes an NcclError carrying NCCL's description and message.
 */
import koffi from 'koffi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetLibraryCache } from '../../../src/ffi/library.js';
import { NcclCommunicator } from '../../../src/nccl/communicator.js';
import { ncclGroup } from '../../../src/nccl/group.js';
import { NcclError } from '../../../src/nccl/nccl-error.js';
import * as raw from '../../../src/nccl/raw/index.js';
import { decodeVersion } from '../../../src/nccl/raw/version.js';
import { NcclUniqueId } from '../../../src/nccl/unique-id.js';
import { InvalidArgumentError } from '../../../src/errors.js';
import { fakeNcclMissing, fakeNcclPath } from './fake-nccl.js';

const saved = process.env.GPUCOMPUTE_LIBNCCL;
let lastCall: () => string;
let liveComms: () => number;
let groupDepth: () => number;

beforeAll(() => {
  if (!fakeNcclPath) return;
  process.env.GPUCOMPUTE_LIBNCCL = fakeNcclPath;
  resetLibraryCache();
  const lib = koffi.load(fakeNcclPath);
  lastCall = lib.func('const char *fakeLastCall()') as () => string;
  liveComms = lib.func('int fakeLiveComms()') as () => number;
  groupDepth = lib.func('int fakeGroupDepth()') as () => number;
});

afterAll(() => {
  if (saved === undefined) delete process.env.GPUCOMPUTE_LIBNCCL;
  else process.env.GPUCOMPUTE_LIBNCCL = saved;
  resetLibraryCache();
});

describe('the NCCL version code', () => {
  it('decodes both encodings (X·1000 up to 2.8, X·10000 after)', () => {
    expect(decodeVersion(2708)).toEqual({ major: 2, minor: 7, patch: 8, code: 2708 });
    expect(decodeVersion(22703)).toEqual({ major: 2, minor: 27, patch: 3, code: 22703 });
    expect(decodeVersion(23007)).toEqual({ major: 2, minor: 30, patch: 7, code: 23007 });
  });
});

describe.skipIf(!fakeNcclPath)(`the raw tier against a fake libnccl ${fakeNcclMissing}`, () => {
  it('reads the version', () => {
    expect(raw.getVersion()).toEqual({ major: 2, minor: 27, patch: 3, code: 22703 });
  });

  it('passes the unique id by value, all 128 bytes, to ncclCommInitRank', () => {
    const id = raw.getUniqueId();
    expect(id).toHaveLength(128);
    expect(id[1]).toBe(10);
    const sum = id.reduce((a, b) => a + b, 0);
    const comm = raw.commInitRank(4, id, 3);
    expect(lastCall()).toBe(`ncclCommInitRank nranks=4 rank=3 idsum=${sum} first=${id[0]} last=${id[127]}`);
    expect(raw.commCount(comm)).toBe(4);
    expect(raw.commUserRank(comm)).toBe(3);
    expect(raw.commGetAsyncError(comm)).toBe(0);
    raw.commDestroy(comm);
    expect(liveComms()).toBe(0);
  });

  it('carries an id through base64 text unchanged', () => {
    const id = NcclUniqueId.create();
    const text = id.toBase64();
    expect(text).toHaveLength(172);
    const back = NcclUniqueId.fromBase64(text);
    expect(back.bytes).toEqual(id.bytes);
    expect(NcclUniqueId.fromBytes(id.bytes).toBase64()).toBe(text);
    const comm = raw.commInitRank(2, back.internal, 0);
    expect(lastCall()).toMatch(/^ncclCommInitRank nranks=2 rank=0 idsum=\d+ first=3 last=124$/);
    raw.commDestroy(comm);
  });

  it('creates one communicator per device with ncclCommInitAll, ranks in order', () => {
    const comms = raw.commInitAll([3, 1]);
    expect(lastCall()).toBe('ncclCommInitAll ndev=2 devs=3,1,');
    expect(comms.map(raw.commUserRank)).toEqual([0, 1]);
    expect(comms.map(raw.commCuDevice)).toEqual([3, 1]);
    expect(comms.map(raw.commCount)).toEqual([2, 2]);
    raw.commFinalize(comms[0]!);
    expect(lastCall()).toBe('ncclCommFinalize rank=0');
    raw.commDestroy(comms[0]!);
    raw.commAbort(comms[1]!);
    expect(lastCall()).toBe('ncclCommAbort rank=1');
    expect(liveComms()).toBe(0);
  });

  it('turns a failure into an NcclError with the code, its name, NCCL\'s description and its last message', () => {
    let error: unknown;
    try {
      raw.commInitAll([0, 0]);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(NcclError);
    const e = error as NcclError;
    expect(e.result).toBe(5);
    expect(e.resultName).toBe('ncclInvalidUsage');
    expect(e.call).toBe('ncclCommInitAll');
    expect(e.description).toBe('invalid usage (run with NCCL_DEBUG=WARN for details)');
    expect(e.lastError).toBe('Duplicate GPU detected');
    expect(e.code).toBe('NCCL_ERROR');
    expect(e.message).toBe('ncclCommInitAll failed with ncclInvalidUsage (5): invalid usage (run with NCCL_DEBUG=WARN for details): Duplicate GPU detected');
    expect(() => raw.commInitRank(2, raw.getUniqueId(), 2)).toThrow(/^ncclCommInitRank failed with ncclInvalidArgument \(4\): invalid argument .*: rank out of range$/);
  });

  it('names a code it does not know by its number', () => {
    const e = new NcclError(42, 'ncclSomething');
    expect(e.resultName).toBe('ncclResult_t 42');
    expect(e.description).toBe('unknown result code');
  });

  it('marshals every collective and point-to-point call: pointers, size_t counts past 2^32, types, ops, roots, streams', () => {
    const comm = raw.commInitRank(2, raw.getUniqueId(), 1);
    const send = 0x7f0000001000n;
    const recv = 0x7f0000802000n;
    const stream = 0x55aa00000001n;
    const big = 2 ** 33 + 5;
    const common = `count=${big} type=9`;
    raw.allReduce(send, recv, big, 9, 4, comm, stream);
    expect(lastCall()).toBe(`ncclAllReduce send=0x7f0000001000 recv=0x7f0000802000 ${common} op=4 root=-1 rank=1 stream=0x55aa00000001 group=0`);
    raw.broadcast(send, recv, big, 9, 1, comm, stream);
    expect(lastCall()).toBe(`ncclBroadcast send=0x7f0000001000 recv=0x7f0000802000 ${common} op=0 root=1 rank=1 stream=0x55aa00000001 group=0`);
    raw.reduce(send, recv, big, 9, 2, 0, comm, stream);
    expect(lastCall()).toBe(`ncclReduce send=0x7f0000001000 recv=0x7f0000802000 ${common} op=2 root=0 rank=1 stream=0x55aa00000001 group=0`);
    raw.allGather(send, recv, big, 9, comm, stream);
    expect(lastCall()).toBe(`ncclAllGather send=0x7f0000001000 recv=0x7f0000802000 ${common} op=0 root=-1 rank=1 stream=0x55aa00000001 group=0`);
    raw.reduceScatter(send, recv, big, 9, 3, comm, stream);
    expect(lastCall()).toBe(`ncclReduceScatter send=0x7f0000001000 recv=0x7f0000802000 ${common} op=3 root=-1 rank=1 stream=0x55aa00000001 group=0`);
    raw.groupStart();
    raw.send(send, 7, 7, 0, comm, 0n);
    expect(lastCall()).toBe('ncclSend send=0x7f0000001000 recv=0 count=7 type=7 op=0 root=0 rank=1 stream=0 group=1');
    raw.recv(recv, 7, 7, 0, comm, 0n);
    expect(lastCall()).toBe('ncclRecv send=0 recv=0x7f0000802000 count=7 type=7 op=0 root=0 rank=1 stream=0 group=1');
    raw.groupEnd();
    expect(groupDepth()).toBe(0);
    expect(() => raw.groupEnd()).toThrow(/^ncclGroupEnd failed with ncclInvalidUsage \(5\).*ncclGroupEnd without ncclGroupStart$/);
    expect(() => raw.allReduce(send, recv, 1, 12, 0, comm, 0n)).toThrow(/ncclAllReduce failed with ncclInvalidArgument \(4\).*invalid data type$/);
    raw.commDestroy(comm);
  });

  it('asks NCCL for its descriptions and messages directly', () => {
    expect(raw.getErrorString(0)).toBe('no error');
    expect(typeof raw.getLastError()).toBe('string');
  });
});

describe('NcclUniqueId refuses what is not an id', () => {
  it('refuses bytes of another length, non-bytes and text that is not base64 of 128 bytes', () => {
    expect(() => NcclUniqueId.fromBytes(new Uint8Array(127))).toThrow(new InvalidArgumentError('NcclUniqueId.fromBytes: an id is 128 bytes, got 127'));
    expect(() => NcclUniqueId.fromBytes([1, 2] as never)).toThrow(/bytes must be a Uint8Array/);
    expect(() => NcclUniqueId.fromBase64('@@@')).toThrow(/not base64 text/);
    expect(() => NcclUniqueId.fromBase64('AAAA')).toThrow(/decodes to 3 bytes, an id is 128/);
    expect(() => NcclUniqueId.fromBase64(5 as never)).toThrow(InvalidArgumentError);
  });

  it('hands out copies, so an id cannot be changed through its bytes', () => {
    const id = NcclUniqueId.fromBytes(new Uint8Array(128).fill(9));
    id.bytes[0] = 1;
    expect(id.bytes[0]).toBe(9);
  });
});

describe.skipIf(!fakeNcclPath)(`ncclGroup against a fake libnccl ${fakeNcclMissing}`, () => {
  it('records the calls of fn between ncclGroupStart and ncclGroupEnd, and returns what fn returns', () => {
    const comm = raw.commInitRank(1, raw.getUniqueId(), 0);
    const result = ncclGroup(() => {
      raw.allReduce(16n, 16n, 4, 7, 0, comm, 0n);
      expect(lastCall()).toMatch(/group=1$/);
      return ncclGroup(() => groupDepth());
    });
    expect(result).toBe(2);
    expect(groupDepth()).toBe(0);
    raw.commDestroy(comm);
  });

  it('ends the group when fn throws, and refuses an async fn after ending it', () => {
    expect(() =>
      ncclGroup(() => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(groupDepth()).toBe(0);
    expect(() => ncclGroup(async () => 1)).toThrow(/ncclGroup: fn returned a promise/);
    expect(groupDepth()).toBe(0);
    expect(() => ncclGroup(5 as never)).toThrow(InvalidArgumentError);
  });
});

describe('NcclCommunicator refuses bad arguments before NCCL or the driver is called', () => {
  const device = { ordinal: 0 } as never;
  it('initAll: an empty list, something not a Device, a device twice', () => {
    expect(() => NcclCommunicator.initAll([])).toThrow('NcclCommunicator.initAll: devices must be a non-empty array of Device');
    expect(() => NcclCommunicator.initAll([device, 'cuda:1' as never])).toThrow('NcclCommunicator.initAll: devices[1] is not a Device');
    expect(() => NcclCommunicator.initAll([device, device])).toThrow('NcclCommunicator.initAll: device 0 is listed twice; a communicator has one rank per device');
  });

  it('initRank: an id that is not an NcclUniqueId, a rank outside the size, a size below 1', () => {
    const id = NcclUniqueId.fromBytes(new Uint8Array(128));
    expect(() => NcclCommunicator.initRank(device, { id: new Uint8Array(128) as never, rank: 0, size: 1 })).toThrow(/id must be an NcclUniqueId/);
    expect(() => NcclCommunicator.initRank(device, { id, rank: 2, size: 2 })).toThrow('NcclCommunicator.initRank: rank must be an integer in [0, 1], got 2');
    expect(() => NcclCommunicator.initRank(device, { id, rank: 0, size: 0 })).toThrow('NcclCommunicator.initRank: size must be a positive integer, got 0');
    expect(() => NcclCommunicator.initRank(device, null as never)).toThrow(InvalidArgumentError);
  });
});
