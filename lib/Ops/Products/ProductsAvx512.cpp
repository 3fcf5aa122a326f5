//===- ProductsAvx512.cpp - The matrix products built for AVX-512 ---------===//
//
// Products.cpp again, compiled with -mavx512f -mavx512dq -mavx512vl
// -mavx512bw -mfma (lib/Ops/CMakeLists.txt) into namespace
// products::avx512 with Eigen renamed (Note [Two builds of Eigen in one
// program]). Run only by the evaluator where the CPU has all of them (Note
// [AVX-512 products] in Products.h).
//
//===----------------------------------------------------------------------===//
#define ONNXIR_PRODUCTS_NS avx512
#define ONNXIR_PRODUCTS_EIGEN onnxir_eigen_avx512
#include "Products.cpp"
