//===- NodeLookahead.h - Prefetching ahead of a walk over a node list ----===//
//
// Note [Node lookahead]
// A walk over a big graph's nodes that reads what each node points to (its
// values, their definitions and names, its attributes) mostly waits for
// memory, one miss after another. A NodeLookahead runs beside such a walk:
// before the walk looks at node i it calls `far` on node i + farDistance
// and `near` on node i + nearDistance (hints that start loading what the
// walk will read; `near` comes later, for what `far`'s loads point to).
//
// The nodes ahead are found by following the list, one node at a time,
// unless the graph holds its node list as an array (Graph::nodeArray, Note
// [Node array]) or the walk goes over an array of its own (-topo's copy of
// the list): then they are read from the array, and the nodes' own
// lines are prefetched a few nodes before `far` runs on them, so that a
// list whose order is not its memory order (a shuffled file after -topo)
// is no longer walked one dependent miss at a time. Hints only: what the
// walk reads and does is unchanged. The walk must not change the graph's
// node list while the lookahead runs (that drops the array it reads).
//
// Note [Operand slots ahead]
// A node's operand slots (its Use array) lie apart from the node, so a
// `far` hook that reads them to find the used values (prefetchValues,
// prefetchOperandValues) met a miss on the array first, and waited for it
// before it could give its hints: the largest single entry of the
// profiles of the save, the verifier and -topo on the 10^6-node chain
// (bench/README.md, ninth session). With `slots` set, the slot arrays are
// asked for kSlots nodes before `far` runs on a node, and the node's own
// lines kLines before that (over a list too, where the walk ahead reads
// only each node's first line, its link), so the hook finds them in cache.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_IR_NODELOOKAHEAD_H
#define ONNXIR_IR_NODELOOKAHEAD_H

#include "onnxir/IR/Graph.h"
#include "onnxir/Support/Export.h"

#include <cstddef>

ONNXIR_API_BEGIN
namespace onnxir {

template <class Far, class Near> class NodeLookahead {
public:
  /// Beside a walk over `g`'s node list. `slots`: also ask for each node's
  /// operand slots before `far` runs on it (Note [Operand slots ahead]).
  NodeLookahead(const Graph &g, unsigned farDistance, unsigned nearDistance, Far far, Near near,
                bool slots = false)
      : arr_(g.nodeArray()), far_(far), near_(near), farIt_(g.nodes().begin()), nearIt_(farIt_),
        slotIt_(farIt_), linesIt_(farIt_), end_(g.nodes().end()), farD_(farDistance),
        nearD_(nearDistance), slots_(slots) {
    if (!arr_.empty()) {
      startArray();
      return;
    }
    if (slots_) {
      for (size_t i = 0; i < linesD() && linesIt_ != end_; ++i) lines(&*linesIt_++);
      for (size_t i = 0; i < (size_t)farD_ + kSlots && slotIt_ != end_; ++i)
        (slotIt_++)->prefetchOperandSlots();
    }
    for (unsigned i = 0; i < farD_ && farIt_ != end_; ++i) far_(*farIt_++);
    for (unsigned i = 0; i < nearD_ && nearIt_ != end_; ++i) near_(*nearIt_++);
  }

  /// Beside a walk over `nodes`, in order (a pass's own array of a list).
  NodeLookahead(llvm::ArrayRef<Node *> nodes, unsigned farDistance, unsigned nearDistance, Far far,
                Near near, bool slots = false)
      : arr_(nodes), far_(far), near_(near), farD_(farDistance), nearD_(nearDistance),
        slots_(slots) {
    startArray(); // empty: step() finds farIt_ == end_ and does nothing
  }

  /// Once per node of the walk (in list order), before the node is looked
  /// at.
  void step() {
    if (!arr_.empty()) {
      const size_t n = arr_.size();
      if (k_ + linesD() < n) lines(arr_[k_ + linesD()]);
      if (slots_ && k_ + farD_ + kSlots < n) arr_[k_ + farD_ + kSlots]->prefetchOperandSlots();
      if (k_ + farD_ < n) far_(*arr_[k_ + farD_]);
      if (k_ + nearD_ < n) near_(*arr_[k_ + nearD_]);
      ++k_;
      return;
    }
    if (slots_) {
      if (linesIt_ != end_) lines(&*linesIt_++);
      if (slotIt_ != end_) (slotIt_++)->prefetchOperandSlots();
    }
    if (farIt_ != end_) far_(*farIt_++);
    if (nearIt_ != end_) near_(*nearIt_++);
  }

private:
  void startArray() {
    for (size_t k = 0; k < linesD() && k < arr_.size(); ++k) lines(arr_[k]);
    if (slots_)
      for (size_t k = 0; k < (size_t)farD_ + kSlots && k < arr_.size(); ++k)
        arr_[k]->prefetchOperandSlots();
    for (size_t k = 0; k < farD_ && k < arr_.size(); ++k) far_(*arr_[k]);
    for (size_t k = 0; k < nearD_ && k < arr_.size(); ++k) near_(*arr_[k]);
  }

  /// How far before `far` (before the slots, with `slots`) a node's own
  /// lines are prefetched, and how far before `far` its operand slots.
  /// Over a list the lines are prefetched only with `slots` (following the
  /// list reads each node's first line anyway).
  static constexpr size_t kLines = 8, kSlots = 8;
  size_t linesD() const { return farD_ + kLines + (slots_ ? kSlots : 0); }
  static void lines(const Node *n) { n->prefetchLines(); }

  llvm::ArrayRef<Node *> arr_;
  Far far_;
  Near near_;
  Graph::NodeList::const_iterator farIt_, nearIt_, slotIt_, linesIt_, end_;
  unsigned farD_, nearD_;
  bool slots_;
  size_t k_ = 0;
};

} // namespace onnxir
ONNXIR_API_END

#endif // ONNXIR_IR_NODELOOKAHEAD_H
