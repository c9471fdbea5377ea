import { describeKernelCompiles } from './compile-kernels.js';

// The training kernels, for sm_80 and for the GPU machines' sm_90.
describeKernelCompiles(['one_hot.cu', 'optimizer.cu']);
describeKernelCompiles(['one_hot.cu', 'optimizer.cu'], 'sm_90');
