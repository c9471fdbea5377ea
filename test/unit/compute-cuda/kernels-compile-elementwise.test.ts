import { describeKernelCompiles } from './compile-kernels.js';

describeKernelCompiles(['unary.cu', 'activation_grad.cu', 'fill.cu']);
