/*
 * The C anchor of bench/launch.ts: loads the CUBIN the TypeScript bench
 * compiled and times the same launches with the same method (wall time of N
 * back-to-back cuLaunchKernel calls on one non-blocking stream, then a
 * synchronise, divided by N; the median of several rounds after a warm-up),
 * checking every launch's result as the TypeScript tiers do.
 *
 * Usage: launch <cubin> <launches> <rounds> <warmup> <n>
 * Prints one JSON line: {"empty_us": ..., "vector_add_us": ..., ...}.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(call)                                                       \
  do {                                                                    \
    CUresult result_ = (call);                                            \
    if (result_ != CUDA_SUCCESS) {                                        \
      const char *name_ = "unknown";                                      \
      cuGetErrorName(result_, &name_);                                    \
      fprintf(stderr, "%s failed with %s (%d)\n", #call, name_, result_); \
      exit(1);                                                            \
    }                                                                     \
  } while (0)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *xs, int count) {
  double sorted[64];
  for (int i = 0; i < count; i++) sorted[i] = xs[i];
  qsort(sorted, count, sizeof(double), compare_doubles);
  return count % 2 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
}

typedef struct {
  CUfunction fn;
  unsigned int grid, block;
  void **params;
} Launch;

/* Fills rounds[] with microseconds per launch; returns their median. */
static double time_launches(const Launch *l, CUstream stream, long launches, int rounds, long warmup, double *per_round) {
  for (long i = 0; i < warmup; i++) CHECK(cuLaunchKernel(l->fn, l->grid, 1, 1, l->block, 1, 1, 0, stream, l->params, NULL));
  CHECK(cuStreamSynchronize(stream));
  for (int r = 0; r < rounds; r++) {
    double start = now_us();
    for (long i = 0; i < launches; i++) CHECK(cuLaunchKernel(l->fn, l->grid, 1, 1, l->block, 1, 1, 0, stream, l->params, NULL));
    CHECK(cuStreamSynchronize(stream));
    per_round[r] = (now_us() - start) / launches;
  }
  return median(per_round, rounds);
}

static void print_rounds(const char *key, const double *xs, int count) {
  printf("\"%s\": [", key);
  for (int i = 0; i < count; i++) printf("%s%.4f", i ? ", " : "", xs[i]);
  printf("]");
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s <cubin> <launches> <rounds> <warmup> <n>\n", argv[0]);
    return 2;
  }
  const char *cubin_path = argv[1];
  long launches = atol(argv[2]);
  int rounds = atoi(argv[3]);
  long warmup = atol(argv[4]);
  unsigned int n = (unsigned int)atol(argv[5]);
  if (launches < 1 || rounds < 1 || rounds > 64 || warmup < 0 || n < 1) {
    fprintf(stderr, "bad arguments\n");
    return 2;
  }

  FILE *f = fopen(cubin_path, "rb");
  if (!f) {
    perror(cubin_path);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *image = malloc(size);
  if (fread(image, 1, size, f) != (size_t)size) {
    fprintf(stderr, "short read of %s\n", cubin_path);
    return 1;
  }
  fclose(f);

  CUdevice device;
  CUcontext ctx;
  CUmodule module;
  CUfunction empty_fn, add_fn;
  CUstream stream;
  CUdeviceptr a, b, c;
  CHECK(cuInit(0));
  CHECK(cuDeviceGet(&device, 0));
  CHECK(cuDevicePrimaryCtxRetain(&ctx, device));
  CHECK(cuCtxSetCurrent(ctx));
  CHECK(cuModuleLoadData(&module, image));
  CHECK(cuModuleGetFunction(&empty_fn, module, "empty_kernel"));
  CHECK(cuModuleGetFunction(&add_fn, module, "vector_add"));
  CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CHECK(cuMemAlloc(&a, n * sizeof(float)));
  CHECK(cuMemAlloc(&b, n * sizeof(float)));
  CHECK(cuMemAlloc(&c, n * sizeof(float)));
  CHECK(cuMemsetD32(a, 0x3f800000u, n)); /* 1.0f */
  CHECK(cuMemsetD32(b, 0x40000000u, n)); /* 2.0f */

  void *add_params[] = {&a, &b, &c, &n};
  Launch empty = {empty_fn, 1, 1, NULL};
  Launch add = {add_fn, (n + 255) / 256, 256, add_params};
  double empty_rounds[64], add_rounds[64];
  double empty_us = time_launches(&empty, stream, launches, rounds, warmup, empty_rounds);
  double add_us = time_launches(&add, stream, launches, rounds, warmup, add_rounds);

  float check[4];
  CHECK(cuMemcpyDtoH(check, c, sizeof check));
  if (check[0] != 3.0f || check[3] != 3.0f) {
    fprintf(stderr, "vector_add computed %g, expected 3\n", check[0]);
    return 1;
  }

  int driver = 0;
  CHECK(cuDriverGetVersion(&driver));
  printf("{\"empty_us\": %.4f, \"vector_add_us\": %.4f, \"driver\": %d, ", empty_us, add_us, driver);
  print_rounds("empty_rounds", empty_rounds, rounds);
  printf(", ");
  print_rounds("vector_add_rounds", add_rounds, rounds);
  printf("}\n");

  cuMemFree(a);
  cuMemFree(b);
  cuMemFree(c);
  cuStreamDestroy(stream);
  cuModuleUnload(module);
  cuDevicePrimaryCtxRelease(device);
  free(image);
  return 0;
}
