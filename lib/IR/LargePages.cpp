//===- LargePages.cpp - Memory blocks: huge-page table, prefaulted slabs -===//
//
// Notes [Large pages] and [Prefaulted slabs] are in include/onnxir/IR/LargePages.h.
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/LargePages.h"

#include "llvm/Support/Compiler.h"
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

namespace {
/// Slabs this big or bigger are mapped prefaulted.
constexpr size_t kPrefaultMin = size_t(256) << 10;
constexpr bool kPrefault =
#if LLVM_ADDRESS_SANITIZER_BUILD || !defined(MAP_POPULATE)
    false; // ASan keeps its own view of heap memory: plain malloc there
#else
    true;
#endif
bool prefaulted(size_t size, size_t alignment) {
  return kPrefault && size >= kPrefaultMin && alignment <= 4096;
}
} // namespace

void *SlabSource::Allocate(size_t size, size_t alignment) {
  if (!prefaulted(size, alignment)) return llvm::allocate_buffer(size, alignment);
#ifdef MAP_POPULATE
  void *p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                   -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return p;
#else
  return nullptr;
#endif
}

void SlabSource::Deallocate(const void *p, size_t size, size_t alignment) {
  if (!prefaulted(size, alignment))
    return llvm::deallocate_buffer(const_cast<void *>(p), size, alignment);
  ::munmap(const_cast<void *>(p), size);
}

} // namespace detail
} // namespace onnxir
