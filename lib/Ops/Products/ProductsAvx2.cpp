//===- ProductsAvx2.cpp - The matrix products built for AVX2 and FMA ------===//
//
// Products.cpp again, compiled with -mavx2 -mfma (lib/Ops/CMakeLists.txt)
// into namespace products::avx2 with Eigen renamed (Note [Two builds of
// Eigen in one program]). Run only where the CPU has both (Note [Host-tuned
// products] in KernelSupport.cpp).
//
//===----------------------------------------------------------------------===//
#define ONNXIR_PRODUCTS_NS avx2
#define ONNXIR_PRODUCTS_EIGEN onnxir_eigen_avx2
#include "Products.cpp"
