// SPDX-License-Identifier: Apache-2.0
#include "cublaslt_epilogue.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>

namespace hgemm::bench {
namespace {

cudaDataType_t to_cuda(DataType t) {
  return t == DataType::F16 ? CUDA_R_16F : t == DataType::BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

cublasLtEpilogue_t to_lt(const EpilogueSpec& e) {
  const bool bias = e.bias == BiasAlong::N;
  switch (e.act) {
    case Activation::ReLU: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case Activation::GELUTanh:
      if (e.aux) return bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
      return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    default: return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  }
}

// One problem's descriptors and algorithm (pointers are set per call).
struct Prepared {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool ok = false;
  std::string error;
  ~Prepared() {
    if (desc) cublasLtMatmulDescDestroy(desc);
    for (cublasLtMatrixLayout_t l : {a, b, d})
      if (l) cublasLtMatrixLayoutDestroy(l);
  }
};

constexpr std::size_t kWorkspaceBytes = 32u << 20;

struct Context {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::map<std::string, std::unique_ptr<Prepared>> prepared;
};

Context& context() {
  static Context c = [] {
    Context x;
    cublasLtCreate(&x.handle);
    cudaMalloc(&x.workspace, kWorkspaceBytes);
    return x;
  }();
  return c;
}

std::string key_of(const MatmulArgs& p, const EpilogueSpec& e) {
  return std::to_string(p.m) + "," + std::to_string(p.n) + "," + std::to_string(p.k) + "," + std::to_string(p.lda) +
         "," + std::to_string(p.ldb) + "," + std::to_string(p.ldd) + "," + std::to_string(static_cast<int>(p.op_a)) +
         std::to_string(static_cast<int>(p.op_b)) + data_type_name(p.a_type) + data_type_name(p.d_type) + e.str() +
         "," + std::to_string(p.epilogue.ldaux);
}

#define LT_CHECK(call)                                                           \
  do {                                                                           \
    const cublasStatus_t s_ = (call);                                            \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                           \
      r->error = std::string(#call) + ": " + cublasGetStatusString(s_);          \
      return;                                                                    \
    }                                                                            \
  } while (0)

void prepare(Prepared* r, cublasLtHandle_t handle, const MatmulArgs& p, const EpilogueSpec& e) {
  // Column-major: Dᵀ (N×M) = op(B)ᵀ (N×K) · op(A)ᵀ (K×M).
  const cublasOperation_t ta = p.op_b == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t tb = p.op_a == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  LT_CHECK(cublasLtMatmulDescCreate(&r->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  LT_CHECK(cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  LT_CHECK(cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  const cublasLtEpilogue_t epi = to_lt(e);
  LT_CHECK(cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
  const cudaDataType_t dt = to_cuda(p.d_type), in = to_cuda(p.a_type);
  if (e.bias == BiasAlong::N)
    LT_CHECK(cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &dt, sizeof(dt)));
  if (e.aux) {
    const std::int64_t ld = p.epilogue.ldaux;
    LT_CHECK(cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof(ld)));
    LT_CHECK(cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &dt, sizeof(dt)));
  }
  const std::uint64_t n = p.n, m = p.m, k = p.k;
  LT_CHECK(cublasLtMatrixLayoutCreate(&r->a, in, ta == CUBLAS_OP_N ? n : k, ta == CUBLAS_OP_N ? k : n, p.ldb));
  LT_CHECK(cublasLtMatrixLayoutCreate(&r->b, in, tb == CUBLAS_OP_N ? k : m, tb == CUBLAS_OP_N ? m : k, p.lda));
  LT_CHECK(cublasLtMatrixLayoutCreate(&r->d, dt, n, m, p.ldd));
  cublasLtMatmulPreference_t pref = nullptr;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const std::size_t ws = kWorkspaceBytes;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(handle, r->desc, r->a, r->b, r->d, r->d, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s != CUBLAS_STATUS_SUCCESS || found == 0) {
    r->error = std::string("cublasLtMatmulAlgoGetHeuristic found no algorithm for ") + e.str() + ": " +
               cublasGetStatusString(s);
    return;
  }
  r->algo = result.algo;
  r->ok = true;
}

}  // namespace

bool cublaslt_matmul(const MatmulArgs& p, const EpilogueSpec& e, std::string* error) {
  if (p.batch != 1 || p.beta != 0.f || cublaslt_epilogue_name(e).empty()) {
    *error = "cuBLASLt has no epilogue " + e.str() + " for this problem (single products, beta = 0 only)";
    return false;
  }
  Context& c = context();
  std::unique_ptr<Prepared>& r = c.prepared[key_of(p, e)];
  if (!r) {
    r = std::make_unique<Prepared>();
    prepare(r.get(), c.handle, p, e);
  }
  if (!r->ok) {
    *error = r->error;
    return false;
  }
  if (e.bias == BiasAlong::N) {
    const void* bias = p.epilogue.bias;
    cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
  }
  if (e.aux) {
    void* aux = p.epilogue.aux;
    cublasLtMatmulDescSetAttribute(r->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux));
  }
  const float alpha = p.alpha, beta = 0.f;
  const cublasStatus_t s = cublasLtMatmul(c.handle, r->desc, &alpha, p.b, r->a, p.a, r->b, &beta, p.d, r->d, p.d, r->d,
                                          &r->algo, c.workspace, kWorkspaceBytes, nullptr);
  if (s != CUBLAS_STATUS_SUCCESS) {
    *error = std::string("cublasLtMatmul: ") + cublasGetStatusString(s);
    return false;
  }
  return true;
}

}  // namespace hgemm::bench
