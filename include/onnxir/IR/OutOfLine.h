//===- OutOfLine.h - A field that costs one pointer while empty -*- C++ -*-===//
//
// Note [Out-of-line fields]
// Nodes, values, attributes and tensors carry fields that ONNX allows and
// models almost never fill: doc strings, metadata, residual serializer
// bytes, device configurations, references. Held inline they made a Node
// 288 bytes and a Value 192, so a 10^6-node model spent more memory, and the
// kernel more time clearing fresh pages, on empty strings than on its graph.
//
// `OutOfLine<T>` keeps such a field on the heap, one pointer wide, and only
// while it holds something: assigning an empty value frees it. Reading gives
// a `const T &` (a shared empty value when there is none), so reads look
// like reads of a plain field; writing goes through assignment, the usual
// appends, or `mut()` for anything else.
//
//   n->docString = "from the exporter";       // allocates
//   llvm::StringRef d = n->docString;         // reads, no allocation
//   n->metadata.emplace_back("k", "v");        // allocates on first entry
//   for (auto &[k, v] : n->metadata) ...      // const iteration
//   n->extras.mut().append(bytes);            // anything else
//   n->docString = "";                         // frees
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_OUTOFLINE_H
#define ONNXIR_IR_OUTOFLINE_H

#include "onnxir/Support/Export.h"

#include "llvm/ADT/StringRef.h"

#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

ONNXIR_API_BEGIN
namespace onnxir {

template <typename T> class OutOfLine {
public:
  using value_type = T;

  OutOfLine() noexcept = default;
  explicit OutOfLine(const T &v) { assign(v); }
  explicit OutOfLine(T &&v) { assign(std::move(v)); }
  OutOfLine(const OutOfLine &o) {
    if (o.p_) p_ = std::make_unique<T>(*o.p_);
  }
  OutOfLine(OutOfLine &&) noexcept = default;
  OutOfLine &operator=(const OutOfLine &o) {
    if (this != &o) {
      if (o.p_) assign(*o.p_);
      else p_.reset();
    }
    return *this;
  }
  OutOfLine &operator=(OutOfLine &&) noexcept = default;
  OutOfLine &operator=(const T &v) {
    assign(v);
    return *this;
  }
  OutOfLine &operator=(T &&v) {
    assign(std::move(v));
    return *this;
  }
  OutOfLine &operator=(std::initializer_list<typename T::value_type> il) {
    assign(T(il));
    return *this;
  }
  /// Assignment from what T can be made of (a `const char *` or a
  /// StringRef for strings).
  template <typename U, typename = std::enable_if_t<!std::is_same_v<std::decay_t<U>, T> &&
                                                    !std::is_same_v<std::decay_t<U>, OutOfLine> &&
                                                    std::is_constructible_v<T, U &&>>>
  OutOfLine &operator=(U &&u) {
    assign(T(std::forward<U>(u)));
    return *this;
  }

  /// The value, or a shared empty one.
  const T &get() const { return p_ ? *p_ : emptyValue(); }
  operator const T &() const { return get(); }
  template <typename U = T, typename = std::enable_if_t<std::is_same_v<U, std::string>>>
  operator llvm::StringRef() const {
    return p_ ? llvm::StringRef(*p_) : llvm::StringRef();
  }
  /// The value for writing; allocates it if absent.
  T &mut() {
    if (!p_) p_ = std::make_unique<T>();
    return *p_;
  }
  /// True if nothing is held (or what is held is empty).
  bool empty() const { return !p_ || p_->empty(); }
  /// True if storage is allocated (for tests of the memory layout).
  bool allocated() const { return p_ != nullptr; }
  void clear() { p_.reset(); }

  // Reading, as on T.
  auto size() const { return get().size(); }
  auto begin() const { return get().begin(); }
  auto end() const { return get().end(); }
  decltype(auto) operator[](size_t i) const { return get()[i]; }
  decltype(auto) front() const { return get().front(); }
  decltype(auto) back() const { return get().back(); }
  decltype(auto) data() const { return get().data(); }
  decltype(auto) c_str() const { return get().c_str(); }
  std::string str() const { return std::string(get()); }

  // Appending, as on T.
  template <typename... A> decltype(auto) emplace_back(A &&...a) {
    return mut().emplace_back(std::forward<A>(a)...);
  }
  template <typename U> void push_back(U &&u) { mut().push_back(std::forward<U>(u)); }
  /// Replaces the contents by [b, e); an empty range frees the storage.
  template <typename It> void assign(It b, It e) {
    if (b == e) p_.reset();
    else mut().assign(b, e);
  }
  void reserve(size_t n) {
    if (n) mut().reserve(n);
  }
  template <typename U> OutOfLine &operator+=(U &&u) {
    mut() += std::forward<U>(u);
    return *this;
  }
  template <typename... A> OutOfLine &append(A &&...a) {
    mut().append(std::forward<A>(a)...);
    return *this;
  }
  OutOfLine &append(std::initializer_list<typename T::value_type> il) {
    mut().append(il);
    return *this;
  }

  friend bool operator==(const OutOfLine &a, const OutOfLine &b) { return a.get() == b.get(); }
  friend bool operator!=(const OutOfLine &a, const OutOfLine &b) { return !(a == b); }
  friend bool operator==(const OutOfLine &a, const T &b) { return a.get() == b; }
  friend bool operator!=(const OutOfLine &a, const T &b) { return !(a.get() == b); }
  friend bool operator==(const T &a, const OutOfLine &b) { return a == b.get(); }
  friend bool operator!=(const T &a, const OutOfLine &b) { return !(a == b.get()); }

private:
  template <typename V> void assign(V &&v) {
    if (v.empty()) p_.reset();
    else if (p_) *p_ = std::forward<V>(v);
    else p_ = std::make_unique<T>(std::forward<V>(v));
  }
  static const T &emptyValue() {
    static const T e{};
    return e;
  }
  std::unique_ptr<T> p_;
};

/// A string kept out of line (Note [Out-of-line fields]).
using OutOfLineString = OutOfLine<std::string>;

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_OUTOFLINE_H
