import { describeKernelCompiles } from './compile-kernels.js';

describeKernelCompiles(['softmax_cluster.cu'], 'sm_90');
