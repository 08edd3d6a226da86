// SPDX-License-Identifier: Apache-2.0
// The fused epilogue as kernels receive it: the public Epilogue reduced to what is switched on
// (a null pointer for every part that is off), plain data for host and device.
#pragma once

#include <cstdint>

#include "common/host_device.h"
#include "hgemm/hgemm.h"

namespace hgemm::detail {

struct FusedEpilogue {
  bool on = false;  ///< any part below; off: the store is the plain alpha·acc + beta·C
  Activation act = Activation::None;
  bool bias_per_row = false;  ///< BiasAlong::M: bias[row of D], else bias[column of D]
  DataType bias_type = DataType::F32, aux_type = DataType::F16;
  const void* bias = nullptr;
  void* aux = nullptr;
  std::int64_t ldaux = 0;
  const float* row_scale = nullptr;
  const float* col_scale = nullptr;
  std::int64_t stride_bias = 0, stride_aux = 0, stride_row_scale = 0, stride_col_scale = 0;

  /// The vectors and aux matrix of product b of a strided batch (the kernels offset them per
  /// element instead: finish_element).
  FusedEpilogue of_product(std::int64_t b) const {
    FusedEpilogue e = *this;
    if (bias) e.bias = static_cast<const char*>(bias) + b * stride_bias * data_type_size(bias_type);
    if (aux) e.aux = static_cast<char*>(aux) + b * stride_aux * data_type_size(aux_type);
    if (row_scale) e.row_scale = row_scale + b * stride_row_scale;
    if (col_scale) e.col_scale = col_scale + b * stride_col_scale;
    return e;
  }
};

/// The kernels' form of a validated Epilogue.
inline FusedEpilogue fused_epilogue(const Epilogue& e) {
  FusedEpilogue f;
  f.on = e.enabled();
  f.act = e.activation;
  if (e.bias_along != BiasAlong::None) {
    f.bias = e.bias, f.bias_type = e.bias_type, f.stride_bias = e.stride_bias;
    f.bias_per_row = e.bias_along == BiasAlong::M;
  }
  if (e.aux_output) f.aux = e.aux, f.aux_type = e.aux_type, f.ldaux = e.ldaux, f.stride_aux = e.stride_aux;
  if (e.scale_rows) f.row_scale = e.row_scale, f.stride_row_scale = e.stride_row_scale;
  if (e.scale_cols) f.col_scale = e.col_scale, f.stride_col_scale = e.stride_col_scale;
  return f;
}

}  // namespace hgemm::detail
