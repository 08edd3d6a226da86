// SPDX-License-Identifier: Apache-2.0
// HGEMM_HOST_DEVICE: functions compiled for both sides under nvcc and as plain C++ otherwise, so
// that CPU tests can check logic the kernels run (swizzles, tile schedules).
#pragma once

#ifdef __CUDACC__
#define HGEMM_HOST_DEVICE __host__ __device__
#else
#define HGEMM_HOST_DEVICE
#endif
