// One-hot encoding: i32 indices seen as [outer, inner] → out [outer, classes, inner] in T (a float
// dtype): 1 where the index equals the class, else 0, so an index outside [0, classes) gives a
// row of zeros. Specialised with -DGC_DTYPE=<float dtype code>. One thread per output element,
// grid-stride; the output is written in order, the indices read where each element needs them.
#include "dtype.cuh"
#include "elementwise.cuh"

extern "C" __global__ void one_hot(const int* __restrict__ indices, T* __restrict__ out, idx_t total, idx_t classes, idx_t inner) {
  for (idx_t e = global_thread(); e < total; e += grid_threads()) {
    const idx_t i = e % inner;
    const idx_t rest = e / inner;
    const long long c = (long long)(rest % classes);
    const idx_t o = rest / classes;
    out[e] = narrow<T>((long long)indices[o * inner + i] == c ? 1.0f : 0.0f);
  }
}
