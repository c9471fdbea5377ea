import { describeKernelCompiles } from './compile-kernels.js';

describeKernelCompiles(['binary.cu', 'cast.cu']);
