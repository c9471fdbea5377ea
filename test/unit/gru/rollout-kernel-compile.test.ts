import { describeKernelCompiles } from '../compute-cuda/compile-kernels.js';

describeKernelCompiles(['gru_rollout.cu']);
