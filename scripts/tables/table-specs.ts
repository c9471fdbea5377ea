/**
 * Which tables are generated, from which header, into which file.
 *
 * Every member of each enum is emitted, deprecated aliases included (they keep
 * their values and gain `@deprecated`), so a code or attribute from anywhere
 * in the header can be named; only counts and range markers (`…_MAX`,
 * `hipErrorTbd`, `…Begin`/`…End`) are left out, as no call takes them.
 */
import type { HeaderId } from './headers.js';

export interface TableSpec {
  /** The exported name, e.g. `DeviceAttribute`. */
  readonly name: string;
  /** Its TSDoc summary (the C type, what it is for). */
  readonly summary: string;
  readonly header: HeaderId;
  /** A typedef'd enum by its typedef name, or the run of `#define`s with a prefix. */
  readonly from: { readonly enum: string } | { readonly defines: string };
  /** Prefixes taken off member names, longest first; every member must carry one. An empty list keeps C names. */
  readonly strip: readonly string[];
  /** Rename `MAX_THREADS_PER_BLOCK` to `MaxThreadsPerBlock` (HIP's tables here). */
  readonly pascalCase?: boolean;
  /** C names left out, each a count or range marker; the generator fails if one is no longer in the header. */
  readonly omit?: readonly string[];
  /** Bits to OR together: no union type of the values is exported, since combinations are valid too. */
  readonly flags?: boolean;
  /** Also export the header's description of each code, by member name, under this name. */
  readonly descriptions?: { readonly name: string; readonly summary: string };
  /** Also export the members whose header comment matches `docMatches`, as a list under `name`. */
  readonly subset?: { readonly name: string; readonly summary: string; readonly docMatches: RegExp };
}

export interface FileSpec {
  /** Path from the repository root. */
  readonly path: string;
  /** What the file holds, said in its banner. */
  readonly about: string;
  readonly tables: readonly TableSpec[];
}

const cuda = (
  name: string,
  summary: string,
  from: TableSpec['from'],
  strip: string,
  more: Partial<TableSpec> = {},
): TableSpec => ({ name, summary, header: 'cuda', from, strip: [strip], ...more });

export const FILE_SPECS: readonly FileSpec[] = [
  {
    path: 'src/driver/generated/enums.ts',
    about: 'The smaller enums and flag sets of the CUDA driver API, named as in C without their common prefix.',
    tables: [
      cuda(
        'FunctionAttribute',
        'CUfunction_attribute: what cuFuncGetAttribute / cuFuncSetAttribute read or write.',
        { enum: 'CUfunction_attribute' },
        'CU_FUNC_ATTRIBUTE_',
        { omit: ['CU_FUNC_ATTRIBUTE_MAX'] },
      ),
      cuda('FunctionCache', 'CUfunc_cache: L1 / shared memory preference of a function.', { enum: 'CUfunc_cache' }, 'CU_FUNC_CACHE_'),
      cuda('ContextFlags', 'CUctx_flags, as given to cuDevicePrimaryCtxSetFlags.', { enum: 'CUctx_flags' }, 'CU_CTX_', {
        flags: true,
      }),
      cuda(
        'ContextLimit',
        'CUlimit: per-context limits read and set with cuCtxGetLimit / cuCtxSetLimit.',
        { enum: 'CUlimit' },
        'CU_LIMIT_',
        { omit: ['CU_LIMIT_MAX'] },
      ),
      cuda('StreamFlags', 'CUstream_flags, as given to cuStreamCreate.', { enum: 'CUstream_flags' }, 'CU_STREAM_', { flags: true }),
      cuda('EventFlags', 'CUevent_flags, as given to cuEventCreate.', { enum: 'CUevent_flags' }, 'CU_EVENT_', { flags: true }),
      cuda('HostAllocFlags', 'CU_MEMHOSTALLOC_* flags of cuMemHostAlloc.', { defines: 'CU_MEMHOSTALLOC_' }, 'CU_MEMHOSTALLOC_', {
        flags: true,
      }),
      cuda(
        'HostRegisterFlags',
        'CU_MEMHOSTREGISTER_* flags of cuMemHostRegister.',
        { defines: 'CU_MEMHOSTREGISTER_' },
        'CU_MEMHOSTREGISTER_',
        { flags: true },
      ),
      cuda(
        'MemPoolAttribute',
        'CUmemPool_attribute: what cuMemPoolGetAttribute / cuMemPoolSetAttribute read or write.',
        { enum: 'CUmemPool_attribute' },
        'CU_MEMPOOL_ATTR_',
      ),
      cuda('JitOption', 'CUjit_option: options of cuModuleLoadDataEx.', { enum: 'CUjit_option' }, 'CU_JIT_', {
        omit: ['CU_JIT_NUM_OPTIONS'],
      }),
      cuda('StreamCaptureMode', 'CUstreamCaptureMode.', { enum: 'CUstreamCaptureMode' }, 'CU_STREAM_CAPTURE_MODE_'),
      cuda('StreamCaptureStatus', 'CUstreamCaptureStatus.', { enum: 'CUstreamCaptureStatus' }, 'CU_STREAM_CAPTURE_STATUS_'),
      cuda(
        'GraphInstantiateFlags',
        'CUgraphInstantiate_flags, as given to cuGraphInstantiate.',
        { enum: 'CUgraphInstantiate_flags' },
        'CUDA_GRAPH_INSTANTIATE_FLAG_',
        { flags: true },
      ),
      cuda(
        'LaunchAttributeId',
        'CUlaunchAttributeID: attributes of cuLaunchKernelEx.',
        { enum: 'CUlaunchAttributeID' },
        'CU_LAUNCH_ATTRIBUTE_',
        { omit: ['CU_LAUNCH_ATTRIBUTE_MAX'] },
      ),
    ],
  },
  {
    path: 'src/driver/generated/device-attribute.ts',
    about: 'Every CUdevice_attribute of the CUDA driver API.',
    tables: [
      cuda(
        'DeviceAttribute',
        'CUdevice_attribute: what cuDeviceGetAttribute reads, without the `CU_DEVICE_ATTRIBUTE_` prefix.',
        { enum: 'CUdevice_attribute' },
        'CU_DEVICE_ATTRIBUTE_',
        { omit: ['CU_DEVICE_ATTRIBUTE_MAX'] },
      ),
    ],
  },
  {
    path: 'src/driver/generated/result-code.ts',
    about: 'Every CUresult code of the CUDA driver API.',
    tables: [
      {
        name: 'CudaResult',
        summary: 'CUresult codes by their C names, so an error can be named even when the driver cannot be asked (cuGetErrorName).',
        header: 'cuda',
        from: { enum: 'CUresult' },
        strip: [],
        subset: {
          name: 'stickyCudaResults',
          summary:
            'The sticky codes: those after which, cuda.h says, "the process must be terminated and relaunched" ' +
            'to continue using CUDA, as the context is corrupt.',
          docMatches: /the process must be terminated and relaunched/,
        },
      },
    ],
  },
  {
    path: 'src/hip/generated/enums.ts',
    about: 'The smaller enums and flag sets of the HIP runtime, named as in C without their common prefix.',
    tables: [
      {
        name: 'HipFunctionAttribute',
        summary: 'hipFunction_attribute (HIP_FUNC_ATTRIBUTE_*): what hipFuncGetAttribute reads.',
        header: 'hipDriverTypes',
        from: { enum: 'hipFunction_attribute' },
        strip: ['HIP_FUNC_ATTRIBUTE_'],
        pascalCase: true,
        omit: ['HIP_FUNC_ATTRIBUTE_MAX'],
      },
      {
        name: 'HipStreamFlags',
        summary: 'Flags of hipStreamCreateWithFlags.',
        header: 'hipRuntimeApi',
        from: { defines: 'hipStream' },
        strip: ['hipStream'],
        flags: true,
      },
      {
        name: 'HipEventFlags',
        summary: 'Flags of hipEventCreateWithFlags.',
        header: 'hipRuntimeApi',
        from: { defines: 'hipEvent' },
        strip: ['hipEvent'],
        flags: true,
      },
      {
        name: 'HipHostMallocFlags',
        summary: 'Flags of hipHostMalloc.',
        header: 'hipRuntimeApi',
        from: { defines: 'hipHostMalloc' },
        strip: ['hipHostMalloc'],
        flags: true,
      },
    ],
  },
  {
    path: 'src/hip/generated/device-attribute.ts',
    about: 'Every hipDeviceAttribute_t of the HIP runtime (the numbering ROCm 5.0 introduced; later releases append).',
    tables: [
      {
        name: 'HipDeviceAttribute',
        summary: 'hipDeviceAttribute_t: what hipDeviceGetAttribute reads, without the `hipDeviceAttribute` prefix.',
        header: 'hipRuntimeApi',
        from: { enum: 'hipDeviceAttribute_t' },
        strip: ['hipDeviceAttribute'],
        omit: [
          'hipDeviceAttributeCudaCompatibleBegin',
          'hipDeviceAttributeCudaCompatibleEnd',
          'hipDeviceAttributeAmdSpecificBegin',
          'hipDeviceAttributeAmdSpecificEnd',
          'hipDeviceAttributeVendorSpecificBegin',
        ],
      },
    ],
  },
  {
    path: 'src/hip/generated/hip-result.ts',
    about: 'Every hipError_t code of the HIP runtime, and what the header says each means.',
    tables: [
      {
        name: 'HipResult',
        summary: 'hipError_t codes by their C names.',
        header: 'hipRuntimeApi',
        from: { enum: 'hipError_t' },
        strip: [],
        omit: ['hipErrorTbd'],
        descriptions: {
          name: 'hipResultHeaderDescriptions',
          summary:
            "The header's comment on each code, by the code's first name, worded as a clause " +
            '(first word in lower case, no closing period) like cuGetErrorString; codes it leaves undescribed are absent.',
        },
      },
    ],
  },
  {
    path: 'src/hip/generated/hiprtc-result.ts',
    about: 'Every hiprtcResult code of hiprtc.',
    tables: [
      {
        name: 'HiprtcResult',
        summary: 'hiprtcResult codes, without their `HIPRTC_ERROR_` / `HIPRTC_` prefix.',
        header: 'hiprtc',
        from: { enum: 'hiprtcResult' },
        strip: ['HIPRTC_ERROR_', 'HIPRTC_'],
      },
    ],
  },
];
