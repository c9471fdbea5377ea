import { describeKernelCompiles } from './compile-kernels.js';

describeKernelCompiles(['softmax.cu', 'layernorm.cu']);
