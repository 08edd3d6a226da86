// SPDX-License-Identifier: Apache-2.0
#include "hgemm/hgemm.h"

namespace hgemm {

const char* status_string(Status s) {
  switch (s) {
    case Status::Success: return "success";
    case Status::InvalidSize: return "invalid size: M, N and K must be >= 0";
    case Status::InvalidLeadingDim: return "invalid leading dimension: smaller than the stored row width";
    case Status::NullPointer: return "null pointer for a non-empty matrix";
    case Status::InvalidPointer: return "pointer not accessible from the GPU";
    case Status::UnknownKernel: return "unknown kernel id";
    case Status::UnsupportedOp: return "the kernel does not implement this op(A)/op(B) combination";
    case Status::UnsupportedAccum: return "the kernel does not implement this accumulation type";
    case Status::Misaligned: return "the kernel needs aligned pointers and leading dimensions";
    case Status::UnsupportedArch: return "the kernel does not run on this GPU architecture";
    case Status::ProblemTooLarge: return "problem too large for the kernel";
    case Status::NoDevice: return "no usable CUDA device";
    case Status::CudaError: return "CUDA error";
    case Status::CublasError: return "cuBLAS error";
    case Status::UnsupportedShape: return "shape not supported by the requested kernel";
    case Status::UnsupportedType: return "data type or type combination not supported";
    case Status::InvalidArgument: return "invalid argument";
    case Status::UnsupportedEpilogue: return "the kernel cannot apply the fused epilogue";
  }
  return "unknown status";
}

}  // namespace hgemm
