//===- LargePages.h - Big IR tables and slabs on transparent huge pages ---===//
//
// Note [Large pages]
// A node-heavy lift touches its big structures at random: the table of
// interned strings (tens of MB at 10^6 names) once per name occurrence, and
// the slabs holding values and name records once per use. With 4 KiB pages
// almost every such access also misses the TLB, and the page walks, not the
// cache misses, were what a batch of prefetches waited on (Note [Prefetched
// names]); each fresh 4 KiB page is also a page fault of its own. So the
// context's string table and its slabs, once they are big, are allocated on
// 2 MiB boundaries and advised as huge pages (madvise MADV_HUGEPAGE): with
// transparent huge pages in "madvise" or "always" mode the kernel backs them
// with 2 MiB pages. It is a hint: with huge pages off, or on a system
// without madvise, the memory is ordinary memory and only the alignment
// differs. Only blocks of at least kLargeBlockMin bytes are advised; small
// contexts (a text model, a test) stay on plain malloc. Slabs are filled
// from their start, so at most the last huge page of each is partly used.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_LARGEPAGES_H
#define ONNXIR_IR_LARGEPAGES_H

#include "llvm/Support/Allocator.h"

#include <cstddef>
#include <new>

namespace onnxir {
namespace detail {

/// Blocks at least this big are 2 MiB aligned and advised as huge pages.
constexpr size_t kLargeBlockMin = size_t(2) << 20;

/// `size` bytes aligned to `alignment`; huge-page advised when large.
/// Throws std::bad_alloc when out of memory, as operator new does.
void *allocateBlock(size_t size, size_t alignment);
void deallocateBlock(void *p, size_t size, size_t alignment);

/// The slab source of the context's bump allocator.
class LargePageAllocator : public llvm::AllocatorBase<LargePageAllocator> {
public:
  void Reset() {}
  LLVM_ATTRIBUTE_RETURNS_NONNULL void *Allocate(size_t size, size_t alignment) {
    return allocateBlock(size, alignment);
  }
  using llvm::AllocatorBase<LargePageAllocator>::Allocate;
  void Deallocate(const void *p, size_t size, size_t alignment) {
    deallocateBlock(const_cast<void *>(p), size, alignment);
  }
  using llvm::AllocatorBase<LargePageAllocator>::Deallocate;
  void PrintStats() const {}
};

/// A std allocator on allocateBlock (the table of interned strings).
template <class T> struct LargePageStdAllocator {
  using value_type = T;
  LargePageStdAllocator() = default;
  template <class U> LargePageStdAllocator(const LargePageStdAllocator<U> &) {}
  T *allocate(size_t n) {
    if (n > size_t(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T *>(allocateBlock(n * sizeof(T), alignof(T)));
  }
  void deallocate(T *p, size_t n) { deallocateBlock(p, n * sizeof(T), alignof(T)); }
  template <class U> bool operator==(const LargePageStdAllocator<U> &) const { return true; }
  template <class U> bool operator!=(const LargePageStdAllocator<U> &) const { return false; }
};

/// The context's slabs: 64 KiB at first, doubling every 8 slabs, so that
/// after the first 16 MB every slab is at least 2 MiB (and huge-page
/// advised); objects bigger than a slab get a slab of their own.
using SlabAllocator = llvm::BumpPtrAllocatorImpl<LargePageAllocator, 65536, 65536, 8>;

} // namespace detail
} // namespace onnxir

#endif // ONNXIR_IR_LARGEPAGES_H
