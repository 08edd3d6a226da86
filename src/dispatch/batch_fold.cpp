// SPDX-License-Identifier: Apache-2.0
#include "dispatch/batch_fold.h"

namespace hgemm::detail {

bool batch_is_one_product(const Matmul& p) {
  if (p.batch <= 1 || p.stride_b != 0 || p.op_a != Op::N || !p.d_used()) return false;
  if (p.stride_a != p.m * p.lda || p.stride_d != p.m * p.ldd) return false;
  if (p.c_read() && p.stride_c != p.m * p.ldc) return false;
  const Epilogue& e = p.epilogue;
  if (e.bias_along == BiasAlong::M || e.scale_rows) return false;
  if ((e.bias_along == BiasAlong::N && e.stride_bias != 0) || (e.scale_cols && e.stride_col_scale != 0)) return false;
  return !e.aux_output || e.stride_aux == p.m * e.ldaux;
}

Matmul as_one_product(const Matmul& p) {
  Matmul q = p;
  q.m = p.m * p.batch;
  q.batch = 1;
  q.stride_a = q.stride_b = q.stride_c = q.stride_d = 0;
  q.epilogue.stride_aux = q.epilogue.stride_bias = q.epilogue.stride_col_scale = 0;
  return q;
}

}  // namespace hgemm::detail
