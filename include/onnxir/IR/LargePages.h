//===- LargePages.h - The table of interned strings on huge pages --------===//
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
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_LARGEPAGES_H
#define ONNXIR_IR_LARGEPAGES_H

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

} // namespace detail
} // namespace onnxir

#endif // ONNXIR_IR_LARGEPAGES_H
