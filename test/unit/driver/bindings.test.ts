import koffi from 'koffi';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cuda } from '../../../src/driver/bindings.js';
import { DeviceAttribute } from '../../../src/driver/generated/device-attribute.js';
import { CudaResult } from '../../../src/driver/result-code.js';

const source = readFileSync(new URL('../../../src/driver/bindings.ts', import.meta.url), 'utf8');
const prototypes = [...source.matchAll(/'(int cu\w+\([^']*\))'/g)].map((m) => m[1]!);
const CUDA_H = '/usr/local/cuda/include/cuda.h';

describe('driver prototypes', () => {
  it('declares one prototype per binding, each parsed by koffi without loading the driver', () => {
    expect(prototypes.length).toBe(Object.keys(cuda).length);
    for (const prototype of prototypes) expect(() => koffi.proto(prototype), prototype).not.toThrow();
  });

  it('names each binding after the symbol its prototype declares', () => {
    const names = prototypes.map((p) => /^int (\w+)\(/.exec(p)![1]);
    expect(names.sort()).toEqual(Object.keys(cuda).sort());
  });

  it('binds the versioned symbols cuda.h maps the plain names to', () => {
    const versioned = [
      'cuMemAlloc_v2',
      'cuMemFree_v2',
      'cuMemcpyHtoD_v2',
      'cuMemcpyDtoH_v2',
      'cuMemcpyDtoD_v2',
      'cuMemcpyHtoDAsync_v2',
      'cuMemcpyDtoHAsync_v2',
      'cuMemcpyDtoDAsync_v2',
      'cuMemsetD8_v2',
      'cuMemsetD16_v2',
      'cuMemsetD32_v2',
      'cuStreamDestroy_v2',
      'cuEventDestroy_v2',
      'cuMemGetInfo_v2',
      'cuDeviceTotalMem_v2',
      'cuDeviceGetUuid_v2',
      'cuDevicePrimaryCtxRelease_v2',
      'cuDevicePrimaryCtxSetFlags_v2',
      'cuDevicePrimaryCtxReset_v2',
      'cuCtxPushCurrent_v2',
      'cuCtxPopCurrent_v2',
      'cuMemAllocHost_v2',
      'cuMemHostRegister_v2',
      'cuMemHostGetDevicePointer_v2',
      'cuModuleGetGlobal_v2',
      'cuStreamBeginCapture_v2',
      'cuGraphInstantiateWithFlags',
      'cuEventElapsedTime_v2',
    ];
    const bound = new Set(Object.keys(cuda));
    for (const name of versioned) {
      expect(bound.has(name), name).toBe(true);
      const plain = name.replace(/_v\d$/, '');
      // cuEventElapsedTime stays bound as the fallback for drivers older than CUDA 12.8.
      if (plain !== name && plain !== 'cuEventElapsedTime') expect(bound.has(plain), plain).toBe(false);
    }
  });

  it('never binds a name cuda.h redefines to a versioned symbol', () => {
    if (!existsSync(CUDA_H)) return;
    const header = readFileSync(CUDA_H, 'utf8');
    const redefined = [...header.matchAll(/^#define\s+(cu\w+)\s+(?:__CUDA_API_PT\w+\()?(cu\w+?_v\d)\)?\s*$/gm)].map((m) => m[1]!);
    expect(redefined.length).toBeGreaterThan(20);
    const bound = new Set(Object.keys(cuda));
    for (const plain of redefined) {
      if (plain === 'cuEventElapsedTime') continue;
      expect(bound.has(plain), plain).toBe(false);
    }
  });
});

describe('enums generated from cuda.h', () => {
  it('spot-checks device attributes and result codes', () => {
    expect(DeviceAttribute.MAX_THREADS_PER_BLOCK).toBe(1);
    expect(DeviceAttribute.MULTIPROCESSOR_COUNT).toBe(16);
    expect(DeviceAttribute.COMPUTE_CAPABILITY_MAJOR).toBe(75);
    expect(DeviceAttribute.COOPERATIVE_LAUNCH).toBe(95);
    expect(DeviceAttribute.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN).toBe(97);
    expect(DeviceAttribute.CLUSTER_LAUNCH).toBe(120);
    expect(CudaResult.CUDA_ERROR_ILLEGAL_ADDRESS).toBe(700);
    expect(CudaResult.CUDA_ERROR_NOT_READY).toBe(600);
  });

  it('match every CUdevice_attribute and CUresult of the installed cuda.h', () => {
    if (!existsSync(CUDA_H)) return;
    const header = readFileSync(CUDA_H, 'utf8');
    const attributeBody = /typedef enum CUdevice_attribute_enum \{([\s\S]*?)\} CUdevice_attribute;/.exec(header)![1]!;
    const attributes = [...attributeBody.matchAll(/CU_DEVICE_ATTRIBUTE_(\w+)\s*=\s*(\d+)/g)].filter((m) => m[1] !== 'MAX');
    expect(attributes.length).toBeGreaterThan(140);
    for (const [, name, value] of attributes) {
      expect((DeviceAttribute as Record<string, number>)[name!], name).toBe(Number(value));
    }
    const resultBody = /typedef enum cudaError_enum \{([\s\S]*?)\} CUresult;/.exec(header)![1]!;
    const results = [...resultBody.matchAll(/(CUDA_\w+)\s*=\s*(\d+)/g)];
    for (const [, name, value] of results) expect((CudaResult as Record<string, number>)[name!], name).toBe(Number(value));
  });
});
