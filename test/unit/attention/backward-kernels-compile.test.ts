import { describeKernelCompiles } from '../compute-cuda/compile-kernels.js';

describeKernelCompiles(['attention_backward.cu', 'attention_backward_mma.cu']);
describeKernelCompiles(['attention_backward.cu', 'attention_backward_mma.cu'], 'sm_90');
