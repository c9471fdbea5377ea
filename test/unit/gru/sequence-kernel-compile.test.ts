import { describeKernelCompiles } from '../compute-cuda/compile-kernels.js';

describeKernelCompiles(['gru_sequence.cu']);
