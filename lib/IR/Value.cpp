//===- Value.cpp - Values and use lists (see Note [Use lists]) ------------===//
#include "onnxir/IR/Value.h"

#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Node.h"
#include <cstddef>
#include <type_traits>

namespace onnxir {

//===----------------------------------------------------------------------===//
// Use
//===----------------------------------------------------------------------===//

void Use::link(Value *v) {
  assert(!value_ && "linking a linked use");
  value_ = v;
  ++v->numUses_;
  next_ = v->firstUse_;
  if (next_) next_->prev_ = &next_;
  prev_ = &v->firstUse_;
  v->firstUse_ = this;
  // Note [Known acyclic graphs]: every new edge of the use-def graph is made
  // here. (A Use outside any node, which only tests make, is no edge.)
  if (owner_) owner_->getGraph()->getContext().noteNewDependencies();
}

void Use::unlink() {
  if (!value_) return;
  --value_->numUses_;
  *prev_ = next_;
  if (next_) next_->prev_ = prev_;
  value_ = nullptr;
  next_ = nullptr;
  prev_ = nullptr;
}

void Use::takeLink(Use &from) {
  assert(!value_ && "moving onto a linked slot");
  if (!from.value_) return;
  value_ = from.value_;
  next_ = from.next_;
  prev_ = from.prev_;
  *prev_ = this;
  if (next_) next_->prev_ = &next_;
  from.value_ = nullptr;
  from.next_ = nullptr;
  from.prev_ = nullptr;
}

bool Use::linksConsistent() const {
  if (!value_) return !prev_ && !next_;
  if (!prev_ || *prev_ != this) return false;
  if (prev_ == &value_->firstUse_) return true;
  // Otherwise prev_ is the next_ field of the use before this one.
  static_assert(std::is_standard_layout_v<Use>, "offsetof needs a standard-layout Use");
  const Use *before = reinterpret_cast<const Use *>(reinterpret_cast<const char *>(prev_) -
                                                    offsetof(Use, next_));
  return before->value_ == value_;
}

void Use::set(Value *v) {
  if (v == value_) return;
  unlink();
  if (v) link(v);
}

unsigned Use::getOperandNo() const {
  return static_cast<unsigned>(this - owner_->operandBegin());
}

//===----------------------------------------------------------------------===//
// Value
//===----------------------------------------------------------------------===//

// Note [Line-aligned objects]: whole lines, the fields walks read first.
static_assert(sizeof(Value) % Context::kCacheLine == 0, "Value is a whole number of cache lines");

Value *Value::create(Context &ctx, Kind k, Graph *g, Node *n, unsigned idx) {
  return new (ctx.allocateLineObject(sizeof(Value))) Value(k, g, n, idx);
}

void Value::destroy(Context &ctx, Value *v) {
  if (ctx.destroyObserver) ctx.destroyObserver->destroyed(v);
  v->~Value();
  ctx.deallocateLineObject(v, sizeof(Value));
}

// Note [Pooled value_info records] in Value.h.
void *detail::allocateIRObject(Context &ctx, size_t size) { return ctx.allocateObject(size); }

void detail::deallocateIRObject(Context &ctx, void *p, size_t size) {
  ctx.deallocateObject(p, size);
}

Value::~Value() {
  assert(useEmpty() && "Value destroyed while still used");
  for (auto it : vi_) {
    it->erased = true;
    it->value = nullptr;
  }
}

Graph *Value::getGraph() const {
  return kind_ == Kind::NodeResult ? node_->getGraph() : graph_;
}

absl::Status Value::setName(llvm::StringRef name) {
  if (name == name_) return absl::OkStatus();
  Graph *g = getGraph();
  llvm::StringRef interned = g->getContext().intern(name);
  if (auto s = g->checkNameFree(interned); !s.ok()) return s;
  g->unregisterValue(this);
  name_ = interned;
  g->registerValue(this);
  syncTensorName();
  return absl::OkStatus();
}

void Value::setNameOrFresh(llvm::StringRef base) {
  Graph *g = getGraph();
  if (name_ == base) return;
  if (g->isNameFree(base)) {
    (void)setName(base);
    return;
  }
  llvm::StringRef fresh = g->freshName(base);
  g->unregisterValue(this);
  name_ = fresh;
  g->registerValue(this);
  syncTensorName();
}

// An initializer's tensor carries the value's name (TensorProto.name).
void Value::syncTensorName() {
  if (tensor_) tensor_->setName(name_.str());
  if (sparse_) sparse_->values.setName(name_.str());
}


bool Value::isGraphOutput() const {
  for (Use *u = firstUse_; u; u = u->getNext())
    if (u->getOwner()->isReturn()) return true;
  return false;
}

void Value::replaceAllUsesWith(Value *v) {
  assert(v != this && "RAUW with itself");
  while (firstUse_) firstUse_->set(v);
}

void Value::replaceUsesIf(Value *v, llvm::function_ref<bool(Use &)> pred) {
  if (v == this) return;
  for (Use *u = firstUse_; u;) {
    Use *next = u->getNext();
    if (pred(*u)) u->set(v);
    u = next;
  }
}

} // namespace onnxir
