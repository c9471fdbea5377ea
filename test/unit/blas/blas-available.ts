import { probeBlas } from '../../../src/blas/probe.js';

/** Whether any CPU BLAS loads here (CI installs Debian's OpenBLAS). */
export const blasAvailable = probeBlas().found;

/** Appended to the titles of suites that need a BLAS, so a skip says what to install. */
export const needsBlas = blasAvailable
  ? ''
  : ' (skipped: no CPU BLAS found; install OpenBLAS, e.g. `apt-get install libopenblas0-pthread`, or set GPUCOMPUTE_LIBBLAS)';
