/// <reference types="@webgpu/types" />
/**
 * One opened WebGPU device and its faults.
 *
 * Dawn reports validation, out-of-memory and internal errors through the device's
 * `uncapturederror` event, synchronously inside the call that met them (createBuffer,
 * createComputePipeline, queue.submit, ...), and device loss through the `lost` promise. Both are
 * recorded here: {@link WebGpuDevice.check} turns a recorded error into a typed one for the
 * operation under way, and after a loss every operation is refused. Dawn's own printing of
 * uncaptured errors is suppressed (the backend reports them).
 *
 * A process exit destroys every device still open first: exiting with a live device made Dawn's
 * driver threads trip over destroyed mutexes ("The futex facility returned an unexpected error
 * code") on an NVIDIA machine.
 */
import { describeAdapter, findAdapter, WEBGPU_FEATURES, type WebGpuAdapterInfo, type WebGpuAdapterOptions, type WebGpuBackendType } from './adapter.js';
import type { DawnGlobals, DawnInstance } from './dawn.js';
import { DawnEventPump } from './event-pump.js';
import { WebGpuDeviceLostError, WebGpuError, WebGpuUnavailableError, type DawnErrorKind } from './webgpu-errors.js';

/** A Dawn error recorded for the next check. */
export interface RecordedError {
  readonly kind: DawnErrorKind;
  readonly message: string;
}

/** Limits raised to the adapter's best when the device is requested (lower is better for the alignments). */
const RAISED_LIMITS = [
  'maxBufferSize',
  'maxStorageBufferBindingSize',
  'maxStorageBuffersPerShaderStage',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupsPerDimension',
  'minUniformBufferOffsetAlignment',
  'minStorageBufferOffsetAlignment',
] as const;

/** Errors kept between two checks: the first is reported, the rest follow from it (and must not pile up). */
const MAX_RECORDED = 16;

const openDevices = new Set<WebGpuDevice>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const device of [...openDevices]) device.destroy();
  });
}

/** An open device: the Dawn objects, what the adapter offers, and the fault state. */
export class WebGpuDevice {
  readonly device: GPUDevice;
  readonly adapterInfo: WebGpuAdapterInfo;
  readonly globals: DawnGlobals;
  readonly pump: DawnEventPump;
  /** The features of {@link WEBGPU_FEATURES} the device was opened with. */
  readonly features: ReadonlySet<string>;
  readonly limits: GPUSupportedLimits;
  readonly #instance: DawnInstance;
  readonly #errors: RecordedError[] = [];
  #lost: { reason: string; message: string } | undefined;
  #destroyed = false;
  /** Resolves with the loss (for racing against waits that a loss would leave pending). */
  readonly lostPromise: Promise<{ reason: string; message: string }>;

  private constructor(instance: DawnInstance, globals: DawnGlobals, device: GPUDevice, adapterInfo: WebGpuAdapterInfo, pump: DawnEventPump) {
    this.#instance = instance;
    this.globals = globals;
    this.device = device;
    this.adapterInfo = adapterInfo;
    this.pump = pump;
    this.features = new Set(WEBGPU_FEATURES.filter((f) => device.features.has(f)));
    this.limits = device.limits;
    device.addEventListener('uncapturederror', (event) => {
      event.preventDefault();
      this.#record((event as GPUUncapturedErrorEvent).error as object & { message: string });
    });
    this.lostPromise = device.lost.then((info) => {
      const loss = { reason: info.reason, message: info.message };
      this.#lost ??= loss;
      return loss;
    });
    openDevices.add(this);
    installExitHook();
  }

  /**
   * Opens a device on the adapter `options` select, with every feature of {@link WEBGPU_FEATURES}
   * the adapter has and its best limits.
   * @throws WebGpuUnavailableError when the package is missing, no adapter answers or the device is refused.
   */
  static async open(options: WebGpuAdapterOptions = {}): Promise<WebGpuDevice> {
    const found = await findAdapter(options);
    try {
      const { adapter } = found;
      const requiredFeatures = WEBGPU_FEATURES.filter((f) => adapter.features.has(f));
      const requiredLimits: Record<string, number> = {};
      for (const name of RAISED_LIMITS) requiredLimits[name] = adapter.limits[name];
      const pump = new DawnEventPump();
      let device: GPUDevice;
      try {
        device = await pump.capture(() => adapter.requestDevice({ requiredFeatures, requiredLimits, label: 'gpucompute' }));
      } catch (err) {
        throw new WebGpuUnavailableError(`the adapter refused a device: ${err instanceof Error ? err.message : String(err)}`, err);
      }
      return new WebGpuDevice(found.instance, found.dawn.globals, device, describeAdapter(adapter, found.backendType, found.robustness), pump);
    } catch (err) {
      found.instance.release();
      throw err;
    }
  }

  get backendType(): WebGpuBackendType {
    return this.adapterInfo.backendType;
  }

  /** Set once the device is lost (or destroyed). */
  get lost(): { reason: string; message: string } | undefined {
    return this.#lost;
  }

  /**
   * Throws for what went wrong since the last check: the device loss (for good), else the first
   * Dawn error recorded (the others are dropped with it: they follow from the first).
   */
  check(operation: string): void {
    if (this.#lost) throw new WebGpuDeviceLostError(operation, this.#lost.reason, this.#lost.message);
    if (this.#errors.length === 0) return;
    const first = this.#errors[0]!;
    this.#errors.length = 0;
    throw new WebGpuError(operation, first.kind, first.message);
  }

  /** A mark for {@link takeErrorsSince}: how many errors are recorded now. */
  errorMark(): number {
    return this.#errors.length;
  }

  /** Removes and returns the errors recorded after `mark` (for callers that handle their own). */
  takeErrorsSince(mark: number): RecordedError[] {
    return this.#errors.splice(mark);
  }

  /** Destroys the device (idempotent); the backend refuses work from then on. */
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#lost ??= { reason: 'destroyed', message: 'the backend was disposed' };
    openDevices.delete(this);
    try {
      this.device.destroy();
    } finally {
      this.#instance.release();
    }
  }

  #record(error: object & { message: string }): void {
    const kind: DawnErrorKind =
      error instanceof this.globals.GPUOutOfMemoryError
        ? 'out-of-memory'
        : error instanceof this.globals.GPUValidationError
          ? 'validation'
          : error instanceof this.globals.GPUInternalError
            ? 'internal'
            : 'unknown';
    if (this.#errors.length < MAX_RECORDED) this.#errors.push({ kind, message: error.message.trim() });
  }
}
