// SPDX-License-Identifier: Apache-2.0
// A kernel that keeps a stack frame (a local array written and read at run-time indices):
// scripts/ptxas-check.sh must fail on it (the ctest ptxas_check_fails_on_stack).
__global__ void keeps_a_stack_frame(float* out, const int* index) {
  float local[64];
  for (int j = 0; j < 64; ++j) local[index[j] & 63] = out[j];
  out[threadIdx.x] = local[index[threadIdx.x + 64] & 63];
}
