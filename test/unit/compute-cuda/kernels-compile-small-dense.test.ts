import { describeKernelCompiles } from './compile-kernels.js';

describeKernelCompiles(['small_dense.cu']);
