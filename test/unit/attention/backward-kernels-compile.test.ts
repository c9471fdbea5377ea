import { describeKernelCompiles } from '../compute-cuda/compile-kernels.js';

describeKernelCompiles(['attention_backward.cu']);
describeKernelCompiles(['attention_backward.cu'], 'sm_90');
