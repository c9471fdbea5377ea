// One step of a GRU layer's backward pass through time (PyTorch's gate order r, z, n), for E
// members at once, in f32. The host runs the steps from the last to the first; before step t < T−1
// a GEMM has left in `sent` what step t + 1 sends back to h_t, dGh_{t+1}·W_hh + dh_{t+1}·z_{t+1}.
// gru_bwd_gates then takes h_t's whole gradient dh = dhSeq_t + sent (dhN at the last step),
// recomputes the step's gates from the forward's projections
//   r = σ(gx_r + b_ir + gh_r + b_hr)   z = σ(gx_z + b_iz + gh_z + b_hz)   n = tanh(gx_n + b_in + r·(gh_n + b_hn))
// (gh = h_{t−1}·W_hhᵀ: slot t − 1 of hW, or h0W at t = 0) and writes
//   da_n = dh·(1 − z)·(1 − n²)   da_z = dh·(h_{t−1} − n)·z·(1 − z)   da_r = da_n·(gh_n + b_hn)·r·(1 − r)
//   dGx_t = [da_r, da_z, da_n],  dGh_t = [da_r, da_z, da_n·r] (into slot t − 1 of dHW, or dH0W, and
//   densely into `gates`, the next GEMM's operand),  carried = dh·z (the next GEMM's addend).
// One thread per (member, row, unit); each thread reads and writes only its own unit, so `carried`
// is read and rewritten in place. The last step also zeroes the unused last slot of dHW.
// Sequences are [E, B, T, X], states [E, B, X], biases [E, 3H]; absent optional pointers are null.
#include "dtype.cuh"
#include "ops.cuh"

extern "C" __global__ void __launch_bounds__(256)
    gru_bwd_gates(const float* __restrict__ gx, const float* __restrict__ hw, const float* __restrict__ h0w,
                  const float* __restrict__ hseq, const float* __restrict__ h0, const float* __restrict__ bih,
                  const float* __restrict__ bhh, const float* __restrict__ dhseq, const float* __restrict__ dhn,
                  const float* __restrict__ sent, float* __restrict__ carried, float* __restrict__ gates,
                  float* __restrict__ dgx, float* __restrict__ dhw, float* __restrict__ dh0w, int E, int B, int T, int H,
                  int t) {
  const idx_t i = (idx_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (idx_t)E * B * H) return;
  const int j = (int)(i % H);
  const idx_t row = i / H;  // e·B + b
  const int e = (int)(row / B);
  const idx_t G = 3 * (idx_t)H;
  const idx_t step = row * T + t;  // (e, b, t) in a sequence
  const float* x = gx + step * G;
  const float* gh = t > 0 ? hw + (step - 1) * G : h0w + row * G;
  const float prev = t > 0 ? hseq[(step - 1) * H + j] : h0[i];
  const idx_t bias = (idx_t)e * G + j;
  const float bir = bih ? bih[bias] : 0.f, biz = bih ? bih[bias + H] : 0.f, bin = bih ? bih[bias + 2 * H] : 0.f;
  const float bhr = bhh ? bhh[bias] : 0.f, bhz = bhh ? bhh[bias + H] : 0.f, bhn = bhh ? bhh[bias + 2 * H] : 0.f;

  float dh = dhseq ? dhseq[step * H + j] : 0.f;
  if (t == T - 1) {
    if (dhn) dh += dhn[i];
  } else {
    dh += sent[i];
  }
  const float r = gc_sigmoid(x[j] + bir + gh[j] + bhr);
  const float z = gc_sigmoid(x[H + j] + biz + gh[H + j] + bhz);
  const float ghn = gh[2 * H + j] + bhn;
  const float n = tanhf(x[2 * H + j] + bin + r * ghn);
  const float da_n = dh * (1.f - z) * (1.f - n * n);
  const float da_z = dh * (prev - n) * z * (1.f - z);
  const float da_r = da_n * ghn * r * (1.f - r);

  float* dx = dgx + step * G;
  dx[j] = da_r;
  dx[H + j] = da_z;
  dx[2 * H + j] = da_n;
  float* dg = t > 0 ? dhw + (step - 1) * G : dh0w + row * G;
  float* dense = gates + row * G;
  dg[j] = dense[j] = da_r;
  dg[H + j] = dense[H + j] = da_z;
  dg[2 * H + j] = dense[2 * H + j] = da_n * r;
  carried[i] = dh * z;
  if (t == T - 1) {
    float* unused = dhw + step * G;
    unused[j] = unused[H + j] = unused[2 * H + j] = 0.f;
  }
}
