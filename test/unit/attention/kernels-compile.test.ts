import { describeKernelCompiles } from '../compute-cuda/compile-kernels.js';

describeKernelCompiles(['attention_simt.cu', 'attention_mma.cu', 'attention_mma_pingpong.cu']);
