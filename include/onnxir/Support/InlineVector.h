//===- InlineVector.h - A vector whose first elements live inside it ------===//
//
// Note [Inline vectors]
//   InlineVector<T, N> is std::vector's interface (the part the shape rules
//   use) over storage that holds its first N elements inside the object and
//   moves to the heap only past them. It exists for infer::Dims (Ops/
//   InferCtx.h): a shape rule builds and returns several shapes per node,
//   nearly all of rank 6 or less, and as std::vector each one was a malloc
//   and a free, about 30% of inference's instructions (bench/README,
//   "pooled value_info records").
//
//   It is ours rather than llvm::SmallVector because it appears in the
//   public API (the InferCtx virtuals), and the API must not tie the layout
//   of its types to one LLVM's headers (README, "Using onnxir from a project
//   on its own LLVM").
//
//   Only trivially copyable elements (pointers, integers): elements move by
//   memcpy/memmove, nothing is constructed or destroyed. Iterators are
//   pointers, invalidated as std::vector's are (by growth, insert, erase)
//   and, unlike std::vector's, also by moving the vector while its elements
//   are inline. Inserting or assigning a range of the vector itself is
//   allowed (the range is read before anything moves).
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_SUPPORT_INLINEVECTOR_H
#define ONNXIR_SUPPORT_INLINEVECTOR_H

#include "onnxir/Support/Export.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <new>
#include <type_traits>
#include <utility>

ONNXIR_API_BEGIN
namespace onnxir {

/// A vector of trivially copyable T keeping up to N elements inline (Note
/// [Inline vectors]).
template <typename T, unsigned N> class InlineVector {
  static_assert(std::is_trivially_copyable_v<T>, "InlineVector moves elements by memcpy");
  static_assert(N > 0, "InlineVector needs inline room");

  template <typename It>
  using IfIterator = std::enable_if_t<std::is_convertible_v<
      typename std::iterator_traits<It>::iterator_category, std::input_iterator_tag>>;

public:
  using value_type = T;
  using size_type = size_t;
  using difference_type = ptrdiff_t;
  using reference = T &;
  using const_reference = const T &;
  using pointer = T *;
  using const_pointer = const T *;
  using iterator = T *;
  using const_iterator = const T *;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  InlineVector() noexcept = default;
  explicit InlineVector(size_type n) { resize(n); }
  InlineVector(size_type n, const T &v) { assign(n, v); }
  template <typename It, typename = IfIterator<It>> InlineVector(It first, It last) {
    assign(first, last);
  }
  InlineVector(std::initializer_list<T> l) { assign(l.begin(), l.end()); }
  InlineVector(const InlineVector &o) {
    if (o.onHeap()) {
      assign(o.begin(), o.end());
    } else {
      copyInline(o);
      size_ = o.size_;
    }
  }
  InlineVector(InlineVector &&o) noexcept { take(o); }
  ~InlineVector() { freeHeap(); }

  InlineVector &operator=(const InlineVector &o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  InlineVector &operator=(InlineVector &&o) noexcept {
    if (this != &o) {
      freeHeap();
      data_ = inline_;
      size_ = 0;
      cap_ = N;
      take(o);
    }
    return *this;
  }
  InlineVector &operator=(std::initializer_list<T> l) {
    assign(l.begin(), l.end());
    return *this;
  }

  //===--- Access ---------------------------------------------------------===//
  iterator begin() noexcept { return data_; }
  const_iterator begin() const noexcept { return data_; }
  iterator end() noexcept { return data_ + size_; }
  const_iterator end() const noexcept { return data_ + size_; }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

  size_type size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_type capacity() const noexcept { return cap_; }
  T *data() noexcept { return data_; }
  const T *data() const noexcept { return data_; }

  T &operator[](size_type i) {
    assert(i < size_ && "InlineVector index out of range");
    return data_[i];
  }
  const T &operator[](size_type i) const {
    assert(i < size_ && "InlineVector index out of range");
    return data_[i];
  }
  T &front() { return (*this)[0]; }
  const T &front() const { return (*this)[0]; }
  T &back() { return (*this)[size_ - 1]; }
  const T &back() const { return (*this)[size_ - 1]; }

  //===--- Changes --------------------------------------------------------===//
  void reserve(size_type n) {
    if (n > cap_) grow(n);
  }
  void clear() noexcept { size_ = 0; }
  void resize(size_type n) { resize(n, T()); }
  void resize(size_type n, const T &v) {
    if (n > size_) {
      T x = v; // v may be an element that growing moves
      reserve(n);
      std::fill(data_ + size_, data_ + n, x);
    }
    size_ = n;
  }
  void assign(size_type n, const T &v) {
    T x = v;
    reserve(n);
    std::fill(data_, data_ + n, x);
    size_ = n;
  }
  template <typename It, typename = IfIterator<It>> void assign(It first, It last) {
    if constexpr (std::is_convertible_v<typename std::iterator_traits<It>::iterator_category,
                                        std::forward_iterator_tag>) {
      size_type n = size_type(std::distance(first, last));
      if (n > cap_) {
        // A range longer than the capacity is not this vector's own.
        T *fresh = allocate(n);
        std::copy(first, last, fresh);
        freeHeap();
        data_ = fresh;
        cap_ = n;
      } else {
        // Element by element from the front: a range of this vector itself
        // lies at or after data_, so nothing is overwritten before it is read.
        T *d = data_;
        for (; first != last; ++first) *d++ = *first;
      }
      size_ = n;
    } else {
      clear();
      for (; first != last; ++first) push_back(*first);
    }
  }
  void assign(std::initializer_list<T> l) { assign(l.begin(), l.end()); }

  void push_back(const T &v) {
    if (size_ == cap_) {
      T x = v; // v may be an element of this vector
      grow(size_ + 1);
      data_[size_++] = x;
      return;
    }
    data_[size_++] = v;
  }
  template <typename... Args> T &emplace_back(Args &&...args) {
    push_back(T(std::forward<Args>(args)...));
    return back();
  }
  void pop_back() {
    assert(size_ && "pop_back of an empty InlineVector");
    --size_;
  }

  iterator insert(const_iterator pos, const T &v) {
    T x = v;
    return insertRaw(pos, 1, &x, true);
  }
  iterator insert(const_iterator pos, size_type n, const T &v) {
    T x = v;
    return insertRaw(pos, n, &x, true);
  }
  template <typename It, typename = IfIterator<It>>
  iterator insert(const_iterator pos, It first, It last) {
    if constexpr (std::is_convertible_v<It, const T *>) {
      const T *f = first, *l = last;
      std::less<const T *> before;
      if (!before(data_, l) || !before(f, data_ + cap_)) // not this vector's elements
        return insertRaw(pos, size_type(l - f), f, false);
    }
    InlineVector copy(first, last); // read before anything moves
    return insertRaw(pos, copy.size(), copy.data(), false);
  }
  iterator insert(const_iterator pos, std::initializer_list<T> l) {
    return insert(pos, l.begin(), l.end());
  }

  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    size_type at = size_type(first - data_), n = size_type(last - first);
    assert(at + n <= size_ && "InlineVector erase out of range");
    if (n) {
      std::memmove(static_cast<void *>(data_ + at), data_ + at + n, (size_ - at - n) * sizeof(T));
      size_ -= n;
    }
    return data_ + at;
  }

  void swap(InlineVector &o) noexcept {
    InlineVector t(std::move(o));
    o = std::move(*this);
    *this = std::move(t);
  }

  friend bool operator==(const InlineVector &a, const InlineVector &b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const InlineVector &a, const InlineVector &b) { return !(a == b); }
  friend bool operator<(const InlineVector &a, const InlineVector &b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }

private:
  bool onHeap() const { return data_ != inline_; }
  static T *allocate(size_type n) {
    void *p = std::malloc(n * sizeof(T));
    if (!p) throw std::bad_alloc();
    return static_cast<T *>(p);
  }
  void freeHeap() {
    if (onHeap()) std::free(data_);
  }
  /// Capacity for at least `n` elements, at least doubling.
  void grow(size_type n) {
    size_type c = std::max<size_type>(n, 2 * size_type(cap_));
    T *fresh = allocate(c);
    if (size_) std::memcpy(static_cast<void *>(fresh), data_, size_ * sizeof(T));
    freeHeap();
    data_ = fresh;
    cap_ = c;
  }
  /// Inserts n copies of *src (repeat) or the n elements at src, which are
  /// not this vector's.
  iterator insertRaw(const_iterator pos, size_type n, const T *src, bool repeat) {
    size_type at = size_type(pos - data_);
    assert(at <= size_ && "InlineVector insert out of range");
    reserve(size_ + n);
    std::memmove(static_cast<void *>(data_ + at + n), data_ + at, (size_ - at) * sizeof(T));
    if (repeat) std::fill(data_ + at, data_ + at + n, *src);
    else if (n) std::memcpy(static_cast<void *>(data_ + at), src, n * sizeof(T));
    size_ += n;
    return data_ + at;
  }
  /// Copies o's whole inline room: a copy of a fixed size, which compiles
  /// to a few moves, where one of o.size_ elements was a call of memcpy.
  /// (The bytes past o.size_ are copied as bytes, never read as elements.)
  void copyInline(const InlineVector &o) noexcept {
    std::memcpy(static_cast<void *>(inline_), o.inline_, sizeof inline_);
  }
  /// Takes o's elements (o is left empty, inline).
  void take(InlineVector &o) noexcept {
    if (o.onHeap()) {
      data_ = o.data_;
      cap_ = o.cap_;
    } else {
      copyInline(o);
    }
    size_ = o.size_;
    o.data_ = o.inline_;
    o.size_ = 0;
    o.cap_ = N;
  }

  T *data_ = inline_;
  uint32_t size_ = 0;
  uint32_t cap_ = N;
  T inline_[N];
};

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_SUPPORT_INLINEVECTOR_H
