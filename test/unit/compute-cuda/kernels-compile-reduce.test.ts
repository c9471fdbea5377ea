import { describeKernelCompiles } from './compile-kernels.js';

describeKernelCompiles(['reduce.cu', 'random.cu', 'transpose.cu']);
