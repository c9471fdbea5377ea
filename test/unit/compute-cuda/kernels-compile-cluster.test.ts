import { describeKernelCompiles } from './compile-kernels.js';

describeKernelCompiles(['softmax_cluster.cu', 'small_rsvd_cluster.cu'], 'sm_90');
