// SPDX-License-Identifier: Apache-2.0
#include <hgemm/hgemm.h>

#include <cstdio>

int main() {
  const auto& list = hgemm::kernels();
  bool has_naive = false;
  for (const auto& k : list) has_naive |= k.id == "cuda.naive";
  const hgemm::Status s = hgemm::gemm(hgemm::Op::N, hgemm::Op::N, -1, 4, 4, 1.f, nullptr, 4, nullptr, 4, 0.f, nullptr, 4);
  std::printf("%zu kernels; gemm(M = -1) -> %s\n", list.size(), hgemm::status_string(s));
  return has_naive && s == hgemm::Status::InvalidSize ? 0 : 1;
}
