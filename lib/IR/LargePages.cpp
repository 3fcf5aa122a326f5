//===- LargePages.cpp - The table of interned strings on huge pages ------===//
//
// Note [Large pages] is in include/onnxir/IR/LargePages.h.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/LargePages.h"

#include "llvm/Support/MemAlloc.h"

#include <cstdlib>
#include <sys/mman.h>

namespace onnxir {
namespace detail {

namespace {
constexpr size_t kHugePage = size_t(2) << 20;
} // namespace

void *allocateBlock(size_t size, size_t alignment) {
  if (size < kLargeBlockMin || alignment > kHugePage) return llvm::allocate_buffer(size, alignment);
  if (size > size_t(-1) - kHugePage) throw std::bad_alloc();
  const size_t rounded = (size + kHugePage - 1) & ~(kHugePage - 1);
  void *p = std::aligned_alloc(kHugePage, rounded);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  // A hint (Note [Large pages]): failure leaves ordinary pages.
  (void)::madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

void deallocateBlock(void *p, size_t size, size_t alignment) {
  if (size < kLargeBlockMin || alignment > kHugePage) return llvm::deallocate_buffer(p, size, alignment);
  std::free(p);
}

} // namespace detail
} // namespace onnxir
