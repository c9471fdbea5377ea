import { describeKernelCompiles } from '../compute-cuda/compile-kernels.js';

describeKernelCompiles(['gru_backward.cu']);
describeKernelCompiles(['gru_backward.cu'], 'sm_90');
