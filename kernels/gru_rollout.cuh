// What the two rollout kernels (gru_rollout.cu: cooperative; gru_rollout_cluster.cu: a cluster
// per member) share: the op-by-op path's rounding points. Needs dtype.cuh first.
#pragma once

// A value as the op-by-op path holds it between ops: rounded to T.
__device__ __forceinline__ float round_to_t(float v) { return widen(narrow<T>(v)); }

// An optional operand (a bias), 0 where absent.
__device__ __forceinline__ float load_or_zero(const T* p, bool present) { return present ? widen(*p) : 0.0f; }
