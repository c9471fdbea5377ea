import { describeKernelCompiles } from '../compute-cuda/compile-kernels.js';

describeKernelCompiles(['attention_decode.cu', 'attention_decode_mma.cu']);
describeKernelCompiles(['attention_decode.cu', 'attention_decode_mma.cu'], 'sm_90');
