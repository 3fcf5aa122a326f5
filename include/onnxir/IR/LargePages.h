//===- LargePages.h - Memory blocks: huge-page table, prefaulted slabs ---===//
//
// Note [Large pages]
// A node-heavy lift looks every name occurrence up in the context's table
// of interned strings: tens of MB at 10^6 names, touched at random. With
// 4 KiB pages almost every probe also misses the TLB, and the page walks,
// not the cache misses, were what a batch of prefetches waited on (Note
// [Prefetched names]). So the table, once it is kLargeBlockMin bytes or
// more, is allocated on a 2 MiB boundary and advised as huge pages
// (madvise MADV_HUGEPAGE): with transparent huge pages in "madvise" or
// "always" mode the kernel backs it with 2 MiB pages. It is a hint: with
// huge pages off the table is ordinary memory, only aligned.
//
// The slabs of nodes and values (Note [IR storage]) would gain too (the
// 10^6-node chain lifted in 0.65-0.85 s instead of 0.9-1.0 s), but not
// reliably: on a virtual machine that hands freed memory back to its host,
// a fresh huge page often costs a host fault, and 1 run in 3 paid a second
// of system time for its 500 MB of slabs (1.7-1.9 s). The table is small
// enough that this does not matter; the slabs stay on ordinary pages.
//
// Note [Prefaulted slabs]
// The slabs are written as soon as they are carved, all of them: a lift
// fills them front to back. Faulting their pages in one at a time cost a
// trap per 4 KiB page, and on a virtual machine a trap is dear (a third of
// a 10^6-node lift's CPU time was system time, most of it fault entry and
// exit, not the clearing of pages). So a slab of kPrefaultMin bytes or
// more is mapped with MAP_POPULATE: the kernel clears and maps its pages
// in one call. The context's slabs double in size every 32 slabs (4 KiB
// at first), so small models never reach the threshold, and what a big
// model has mapped beyond its last object is at most one slab (under 2%
// of its memory at 10^6 nodes). AddressSanitizer builds take slabs from
// malloc, as before.
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_LARGEPAGES_H
#define ONNXIR_IR_LARGEPAGES_H

#include "onnxir/Support/Export.h"

#include "llvm/Support/AllocatorBase.h"

#include <cstddef>
#include <new>

ONNXIR_API_BEGIN
namespace onnxir {
namespace detail {

/// Blocks at least this big are 2 MiB aligned and advised as huge pages.
constexpr size_t kLargeBlockMin = size_t(2) << 20;

/// `size` bytes aligned to `alignment`; huge-page advised when large.
/// Throws std::bad_alloc when out of memory, as operator new does.
void *allocateBlock(size_t size, size_t alignment);
void deallocateBlock(void *p, size_t size, size_t alignment);

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

/// Where the context's slabs come from (Note [Prefaulted slabs]): big
/// slabs are mapped with their pages already present.
class SlabSource : public llvm::AllocatorBase<SlabSource> {
public:
  void *Allocate(size_t size, size_t alignment);
  void Deallocate(const void *p, size_t size, size_t alignment);
  using AllocatorBase<SlabSource>::Allocate;
  using AllocatorBase<SlabSource>::Deallocate;
};

} // namespace detail
} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_LARGEPAGES_H
