//===- DestroyObserverTest.cpp - Context::destroyObserver, sharedBytes ----===//
//
// What the Python bindings rely on (Note [Python handles] in
// python/src/Core.h): every Node, Value and Graph is announced before it is
// destroyed, however it goes; and a tensor's bytes can be held past the
// tensor.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include <cstring>
#include <memory>
#include <set>

using namespace onnxir;
using onnxir::test::addSubgraph;

namespace {

struct Recorder : Context::DestroyObserver {
  // Addresses are reused (the context's free lists): a set, not a count.
  std::set<const void *> seen;
  void destroyed(const void *p) override { seen.insert(p); }
};

TEST(DestroyObserverTest, EveryWayAnObjectGoes) {
  Recorder rec;
  auto m = std::make_unique<Model>();
  m->getContext().destroyObserver = &rec;
  Graph &g = m->graph();
  Value *x = *g.addInput("x");

  // Node::erase: the node and its results.
  Node *a = g.createNode("Neg", {x}, 1);
  Value *ar = a->result(0);
  ASSERT_TRUE(a->erase().ok());
  EXPECT_TRUE(rec.seen.count(a) && rec.seen.count(ar));

  // A node with a subgraph: the subgraph, its nodes and their results too.
  Node *b = g.createNode("If", {x}, 1);
  Graph *sub = addSubgraph(b, "then_branch");
  Node *inner = sub->createNode("Neg", {x}, 1);
  Value *innerResult = inner->result(0);
  sub->addOutput(innerResult);
  ASSERT_TRUE(b->erase().ok());
  EXPECT_TRUE(rec.seen.count(b) && rec.seen.count(sub) && rec.seen.count(inner) &&
              rec.seen.count(innerResult));

  // A removed initializer, a removed input.
  Tensor t;
  t.setDataType(DataType::Float);
  t.setDims({1});
  t.setRaw(std::string(4, '\0'));
  Value *w = *g.addInitializer("w", t);
  EXPECT_EQ(g.removeInitializersIf([&](Value *v) { return v == w; }), 1u);
  EXPECT_TRUE(rec.seen.count(w));
  ASSERT_TRUE(g.removeInput(0).ok());
  EXPECT_TRUE(rec.seen.count(x));

  // No observer: nobody is told.
  rec.seen.clear();
  m->getContext().destroyObserver = nullptr;
  ASSERT_TRUE(g.createNode("Neg", {nullptr}, 1)->erase().ok());
  EXPECT_TRUE(rec.seen.empty());

  // The model going: its graph and every node in it.
  m->getContext().destroyObserver = &rec;
  Node *d = g.createNode("Neg", {nullptr}, 1);
  Graph *main = &g;
  m.reset();
  EXPECT_TRUE(rec.seen.count(main) && rec.seen.count(d));
}

TEST(DestroyObserverTest, SharedBytesOutliveTheTensor) {
  std::shared_ptr<const Buffer> owner;
  llvm::StringRef bytes;
  {
    Tensor t;
    t.setDataType(DataType::Float);
    t.setDims({2});
    t.floatData.mut() = {1.0f, 2.0f};
    t.setTyped(Tensor::TypedField::Float);
    auto sb = t.sharedBytes();
    ASSERT_TRUE(sb.ok());
    owner = sb->first;
    bytes = sb->second;
    ASSERT_EQ(bytes.size(), 8u);
    Tensor raw;
    raw.setDataType(DataType::Int32);
    raw.setDims({1});
    raw.setRaw(std::string("\x07\0\0\0", 4));
    auto rb = raw.sharedBytes();
    ASSERT_TRUE(rb.ok() && rb->first);
    EXPECT_EQ(rb->second, llvm::StringRef("\x07\0\0\0", 4));
    Tensor empty;
    auto eb = empty.sharedBytes();
    ASSERT_TRUE(eb.ok());
    EXPECT_EQ(eb->first, nullptr);
  }
  ASSERT_TRUE(owner);
  float f[2];
  std::memcpy(f, bytes.data(), 8);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], 2.0f);
}

} // namespace
