import { describeKernelCompiles } from '../compute-cuda/compile-kernels.js';

describeKernelCompiles(['gru_rollout_cluster.cu'], 'sm_90');
