//===- ConvertPrecision.cpp - float32 to float16/bfloat16 -----------------===//
//
// convert-precision{type=float16|bfloat16}: the float32 values of the main
// graph and its subgraphs become the target type where the operator that
// computes or reads them accepts it, decided from the types inference gives
// (run first, in memory) and the op schema in force (a type constraint that
// allows tensor(float16) at the node's version), never from an op list
// alone. What stays float32 meets the converted region through Casts, so
// every value has one type that agrees with its definition, every use, every
// Cast's `to` and the value_info records:
//  - graph inputs and outputs of the main graph stay float32 (keep-io);
//  - the interfaces of subgraphs (If/Loop/Scan bodies: inputs, outputs, and
//    the control-flow node's own operands and results) stay float32; the
//    nodes inside are converted like any other, outer values they capture
//    are cast in the outer graph where they are defined;
//  - nodes of the block list (Note [Precision-sensitive ops]), nodes named in
//    block-nodes, nodes without a schema (custom domains, function calls),
//    results whose type an attribute sets (RandomNormal's dtype, EyeLike),
//    formals of a fixed float type (Resize's scales), and float chains that
//    compute shapes (Note [Integer-valued float chains]) stay float32;
//  - constants (initializers, Constant and ConstantOfShape values) are
//    converted when every use wants the target type, else kept and cast;
//    values outside the target's range are reported and clamped (Note
//    [Constants outside the target's range]);
//  - a Cast to float inside the converted region casts to the target type,
//    and one left casting a value to its own type is removed; a Cast back
//    across an exact round trip (float16 -> float -> float16) is not made.
// Function bodies are left alone (their types depend on the call).
//
//===----------------------------------------------------------------------===//
#include "onnxir/IR/Builder.h"
#include "onnxir/IR/CoreOps.h"
#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/ValueInfo.h"
#include "onnxir/Ops/OpSchema.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Support/LLVMCompat.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <cmath>
#include <map>
#include <set>

namespace onnxir {

namespace {

// Note [Precision-sensitive ops]
// The default block list keeps in float32 the ops whose float16 result can
// be far from the float32 one although each input converts well:
//  - reductions that add many terms (ReduceSum, ReduceSumSquare, ReduceMean,
//    ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceProd, CumSum,
//    LpNormalization): a sum of a few thousand activations passes float16's
//    65504, and each added term is rounded to 11 bits of the running sum;
//  - Range: start + i * delta in float16 gives the wrong element count and
//    wrong indices past 2048.
// Softmax and LayerNormalization are not blocked: they subtract the max
// (resp. the mean) first, and onnxruntime accumulates them in float32 for
// float16 inputs. Shape arithmetic done in float is found by its data flow
// instead (Note [Integer-valued float chains]).
// (The list is ConvertPrecisionOptions::blockOps' default, Passes.h.)

// Note [Integer-valued float chains]
// Exports compute shapes in float: Cast(Shape(x)[2], float) * scale, Floor,
// Cast back to int64, or feed Resize's float scales. float16 holds integers
// exactly only up to 2048, so such a chain must stay float32. A float32 value
// is integer-derived when a Cast from an integer or bool type makes it, or
// when a node makes it from integer-derived values and constants only. A
// node using such a value where float32 is wanted (a blocked op, a formal of
// fixed type float, a Cast to an integer type, a comparison or other node
// with no float result) keeps the whole chain behind it in float32. A chain
// that ends in activations (an attention mask built from a boolean one:
// (1 - Cast(mask)) * -3.4e38, added to scores) is converted with them.

// Note [Constants outside the target's range]
// float16 ends at 65504, bfloat16 at 3.39e38 (float32's 3.40e38 rounds up to
// infinity). A constant holding a value past that is never left to become
// infinity. Values of -1e9 and below are mask fills (torch.finfo(float32).min,
// -1e9, -3.4e38 in additive attention masks): they are reported and
// become half the target's lowest value, -32752 for float16: exp of it
// after the max is subtracted is 0 in float16 as in float32, two such masks
// added (causal + padding) stay finite instead of -inf (a row of -inf is NaN
// after Softmax), and onnxruntime's Attention, which zeroes rows whose
// biases all equal the lowest value (Note [Masks filled with finfo.min],
// AttentionMasks.cpp), still gives the mean of V as the graph does. Any
// other value past the range (a BatchNormalization variance of 1e8, a scale
// of 1e5) is data, not a fill: the nodes reading that constant stay float32
// (reported), so it is not converted. (A float32 graph input's default
// converted with keep-io=false is clamped to the largest finite value, and
// reported.) Nonzero values that round to zero (float16 below 6e-8) are
// counted and reported once per model: small weights do, harmlessly.

// Note [Quantized models are left alone]
// A model that computes in integers already (ConvInteger/MatMulInteger with
// DynamicQuantizeLinear, QLinear* ops, QuantizeLinear/DequantizeLinear
// pairs) is not converted: its int32 accumulators are cast to float before
// their scale brings them back into range (isnet_quint8: Cast(ConvInteger)
// * scale), and in float16 they pass 65504 and become infinity; the
// quantization parameters are float32 by construction. The pass says so in
// a remark and changes nothing.
bool isQuantizedOp(const Node &n) {
  llvm::StringRef op = n.opType(), d = n.domain();
  if (!d.empty() && d != "ai.onnx" && d != "com.microsoft") return false;
  return op == "ConvInteger" || op == "MatMulInteger" || op == "DynamicQuantizeLinear" ||
         op == "QuantizeLinear" || op == "DequantizeLinear" || startsWith(op, "QLinear") ||
         op == "MatMulNBits" || op == "DynamicQuantizeMatMul";
}

/// Constant values at or below this are mask fills (Note [Constants outside
/// the target's range]).
constexpr float kMaskFill = -1e9f;

struct Plan {
  bool blocked = false;
  /// The type constraints this node's float32 operands bind that the schema
  /// in force lets be the target type.
  llvm::SmallVector<const TypeConstraint *, 2> converted;
  /// A Cast whose result may become the target type (to = float).
  bool castToFloat = false;
};

class Converter {
public:
  Converter(Model &m, const ConvertPrecisionOptions &o, ConvertPrecisionStatistics &s,
            std::vector<std::string> *remarks)
      : m_(m), opts_(o), stats_(s), remarks_(remarks) {
    target_ = (o.type == "bfloat16" || o.type == "bf16") ? DataType::BFloat16 : DataType::Float16;
    targetStr_ = target_ == DataType::Float16 ? "tensor(float16)" : "tensor(bfloat16)";
    for (absl::string_view op : absl::StrSplit(o.blockOps, ',', absl::SkipEmpty()))
      blockOps_.insert(llvm::StringRef(op.data(), op.size()).trim().str());
    for (absl::string_view n : absl::StrSplit(o.blockNodes, ',', absl::SkipEmpty()))
      blockNodes_.insert(llvm::StringRef(n.data(), n.size()).trim().str());
  }
  absl::StatusOr<bool> run();

private:
  bool isF32(const Value *v) const {
    auto e = elemOf(v);
    return e && *e == DataType::Float;
  }
  bool isConstant(const Value *v) const;
  bool wantsTarget(const Use &u) const;
  void planNode(Node &n);
  void blockShapeChains();
  bool decideValue(Value *v) const;
  /// Converts float32 `t` to the target type, clamping and reporting as
  /// Note [Constants outside the target's range] says; `keepFloat`: the
  /// clamped values stay float32 (a constant its op cannot hold in the
  /// target type, cast to it by its users).
  absl::Status convertTensor(Tensor &t, const std::string &where, bool keepFloat = false);
  const Type *retyped(const Type *t, DataType e) {
    return m_.getContext().getTensorType(e, t->hasShape() ? std::optional(t->dims()) : kUnknownRank);
  }
  Value *castOf(Value *v, DataType to);
  void remark(std::string s) {
    if (remarks_) remarks_->push_back(std::move(s));
  }

  Model &m_;
  const ConvertPrecisionOptions &opts_;
  ConvertPrecisionStatistics &stats_;
  std::vector<std::string> *remarks_;
  DataType target_;
  std::string targetStr_;
  std::set<std::string> blockOps_, blockNodes_;
  std::vector<Graph *> graphs_;
  llvm::DenseMap<const Node *, Plan> plans_;
  llvm::DenseMap<Value *, bool> toTarget_; ///< every float32 value: its new type
  std::map<std::string, int64_t> keptByOp_;
  /// Constants holding a value past the target's range that is not a mask
  /// fill (memoised), and the nodes kept float32 for reading one.
  llvm::DenseMap<const Value *, bool> overflows_;
  int64_t keptForRange_ = 0, constantsFlushing_ = 0;
  std::string firstKeptForRange_;
  bool overflows(const Value *v);
};

bool Converter::isConstant(const Value *v) const {
  if (storedConstantOf(v)) return true;
  const Node *d = v->definingNode();
  return d && d->opType() == "ConstantOfShape" && d->domain().empty();
}

void Converter::planNode(Node &n) {
  Plan &p = plans_[&n];
  const OpSchema *s = schemaFor(n, m_);
  llvm::StringRef op = n.opType();
  bool touchesF32 = false;
  for (Value *v : n.operands()) touchesF32 |= isF32(v);
  for (Value *v : n.results()) touchesF32 |= isF32(v);
  if (!touchesF32) return;
  // block-nodes names a node, or an unnamed node by its first result.
  llvm::StringRef id = !n.name().empty()                     ? n.name()
                       : n.numResults() && n.result(0) ? n.result(0)->name()
                                                       : llvm::StringRef();
  if (!s || n.hasSubgraphs() || blockOps_.count(op.str()) ||
      (!id.empty() && blockNodes_.count(id.str()))) {
    p.blocked = true;
    ++keptByOp_[op.str()];
    return;
  }
  for (Value *v : n.operands())
    if (isF32(v) && isConstant(v) && overflows(v)) {
      p.blocked = true;
      ++stats_.rangeNodes;
      if (!keptForRange_++)
        firstKeptForRange_ = absl::StrCat(n.getGraph()->path(), " > node \"", id.str(), "\" (",
                                          op.str(), ") reading \"", v->name().str(), "\"");
      return;
    }
  if (n.domain().empty() && op == "Cast") {
    Attribute *to = n.getAttr("to");
    const FormalParameter *out = s->outputFor(0);
    p.castToFloat = to && to->i == (int64_t)DataType::Float && out && out->constraint &&
                    out->constraint->allows(targetStr_);
  }
  for (unsigned i = 0; i < n.numOperands(); ++i) {
    const FormalParameter *f = s->inputFor(i);
    if (!isF32(n.operand(i)) || !f || !f->constraint || !f->constraint->allows(targetStr_))
      continue;
    if (std::find(p.converted.begin(), p.converted.end(), f->constraint) == p.converted.end())
      p.converted.push_back(f->constraint);
  }
}

bool Converter::overflows(const Value *v) {
  auto [it, fresh] = overflows_.try_emplace(v, false);
  if (!fresh) return it->second;
  const Tensor *t = storedConstantOf(v);
  if (!t)
    if (Node *d = v->definingNode())
      if (Attribute *a = d->getAttr("value"); a && a->tensors.size() == 1) t = a->tensors[0].get();
  if (!t || t->dataType() != DataType::Float) return false;
  auto vals = t->values<float>();
  if (!vals.ok()) return false;
  const bool half = target_ == DataType::Float16;
  const float maxFinite = half ? 65504.0f : bfloat16ToFloat(0x7F7F);
  for (float x : *vals)
    if (std::isfinite(x) && x > kMaskFill && std::fabs(x) > maxFinite) {
      // Past the range only if it rounds to infinity (65519 is 65504).
      uint16_t h = half ? floatToHalf(x) : floatToBFloat16(x);
      if (std::isinf(half ? halfToFloat(h) : bfloat16ToFloat(h))) return overflows_[v] = true;
    }
  return false;
}

bool Converter::wantsTarget(const Use &u) const {
  Node *owner = u.getOwner();
  if (owner->isReturn()) {
    Graph *g = owner->getGraph();
    return g == &m_.graph() && !opts_.keepIO;
  }
  auto it = plans_.find(owner);
  if (it == plans_.end() || it->second.blocked) return false;
  const OpSchema *s = schemaFor(*owner, m_);
  const FormalParameter *f = s ? s->inputFor(u.getOperandNo()) : nullptr;
  const auto &c = it->second.converted;
  return f && f->constraint && std::find(c.begin(), c.end(), f->constraint) != c.end();
}

void Converter::blockShapeChains() {
  llvm::DenseSet<const Value *> derived;
  auto isIntegral = [](const Value *v) {
    auto e = elemOf(v);
    return e && (*e == DataType::Bool || isSignedInteger(*e) || isUnsignedInteger(*e));
  };
  for (Graph *g : graphs_)
    for (Node &n : g->nodes()) {
      if (n.hasSubgraphs() || n.numResults() == 0) continue;
      bool made = false;
      if (n.opType() == "Cast" && n.domain().empty() && n.numOperands() == 1)
        made = isIntegral(n.operand(0));
      else {
        bool any = false, all = true;
        for (Value *v : n.operands()) {
          if (!isF32(v)) continue;
          if (derived.count(v)) any = true;
          else if (!isConstant(v)) all = false;
        }
        made = any && all;
      }
      if (made)
        for (Value *r : n.results())
          if (isF32(r)) derived.insert(r);
    }
  if (derived.empty()) return;
  std::vector<Value *> work;
  std::vector<Node *> sinks;
  for (Graph *g : graphs_)
    for (Node &n : g->nodes()) {
      bool makesDerived = false;
      for (Value *r : n.results()) makesDerived |= r && derived.count(r);
      if (makesDerived) continue;
      bool floatResult = false;
      for (Value *r : n.results()) floatResult |= isF32(r);
      bool sink = false;
      for (const Use &u : n.operandUses())
        if (u.get() && derived.count(u.get()) && (!floatResult || !wantsTarget(u))) {
          work.push_back(u.get());
          sink = true;
        }
      // A node with no float result (a Cast to int64, a comparison) reads
      // the chain as float32 too.
      if (sink && !floatResult) sinks.push_back(&n);
    }
  for (Node *n : sinks) plans_[n].blocked = true;
  llvm::DenseSet<const Node *> seen;
  while (!work.empty()) {
    Value *v = work.back();
    work.pop_back();
    Node *d = v->definingNode();
    if (!d || !seen.insert(d).second) continue;
    Plan &p = plans_[d];
    if (!p.blocked) {
      p.blocked = true;
      ++stats_.shapeChainNodes;
    }
    for (Value *o : d->operands())
      if (o && derived.count(o)) work.push_back(o);
  }
}

/// True when float32 value `v` becomes the target type (decided from the
/// plans, before anything changes).
bool Converter::decideValue(Value *v) const {
  if (v->isGraphInput()) return v->getGraph() == &m_.graph() && !opts_.keepIO;
  if (Node *d = v->definingNode()) {
    auto it = plans_.find(d);
    bool constantNode = d->domain().empty() &&
                        ((isConstantNode(*d) && storedConstantOf(v)) ||
                         d->opType() == "ConstantOfShape");
    bool castNode = it != plans_.end() && it->second.castToFloat && !it->second.blocked;
    if (constantNode) {
      // Its result's constraint must allow the target at the opset in force
      // (ConstantOfShape takes bfloat16 only from opset 20).
      const OpSchema *s = schemaFor(*d, m_);
      const FormalParameter *f = s ? s->outputFor(v->resultIndex()) : nullptr;
      if (!f || !f->constraint || !f->constraint->allows(targetStr_)) return false;
    }
    if (constantNode || castNode) {
      // Converted when every use wants the target type (and one does).
      if (v->useEmpty()) return false;
      for (const Use &u : v->uses())
        if (!wantsTarget(u)) return false;
      return true;
    }
    if (it == plans_.end() || it->second.blocked) return false;
    const OpSchema *s = schemaFor(*d, m_);
    const FormalParameter *f = s ? s->outputFor(v->resultIndex()) : nullptr;
    const auto &c = it->second.converted;
    return f && f->constraint && std::find(c.begin(), c.end(), f->constraint) != c.end();
  }
  if (v->isConstantInitializer()) {
    if (v->useEmpty()) return false;
    for (const Use &u : v->uses())
      if (!wantsTarget(u)) return false;
    return true;
  }
  return false;
}

absl::Status Converter::convertTensor(Tensor &t, const std::string &where, bool keepFloat) {
  auto vals = t.values<float>();
  if (!vals.ok())
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": cannot read the float32 data: ", vals.status().message()));
  const bool half = target_ == DataType::Float16;
  auto encode = [&](float f) { return half ? floatToHalf(f) : floatToBFloat16(f); };
  auto decode = [&](uint16_t h) { return half ? halfToFloat(h) : bfloat16ToFloat(h); };
  const float maxFinite = decode(half ? 0x7BFF : 0x7F7F);
  int64_t high = 0, masks = 0, flushed = 0;
  float worstHigh = 0, worstMask = 0;
  std::string bytes(vals->size() * 2, '\0');
  for (size_t i = 0; i < vals->size(); ++i) {
    float x = (*vals)[i];
    uint16_t h = encode(x);
    float back = decode(h);
    if (std::isinf(back) && std::isfinite(x)) {
      if (x > kMaskFill) {
        h = encode(maxFinite);
        ++high;
        worstHigh = std::max(worstHigh, x);
      } else {
        h = encode(-maxFinite / 2);
        ++masks;
        worstMask = std::min(worstMask, x);
      }
    } else if (back == 0 && x != 0) {
      ++flushed;
    }
    bytes[2 * i] = (char)(h & 0xff);
    bytes[2 * i + 1] = (char)(h >> 8);
  }
  const char *name = half ? "float16" : "bfloat16";
  if (masks)
    remark(absl::StrCat(where, ": ", masks, " mask value(s) down to ", worstMask,
                        " are below ", name, "'s range: clamped to ", -maxFinite / 2));
  if (high)
    remark(absl::StrCat(where, ": ", high, " value(s) up to ", worstHigh, " are above ", name,
                        "'s range: clamped to ", maxFinite));
  if (flushed && !keepFloat) ++constantsFlushing_;
  stats_.valuesClamped += masks + high;
  if (!keepFloat) stats_.valuesFlushed += flushed;
  if (keepFloat) {
    if (!masks && !high) return absl::OkStatus();
    std::vector<float> clamped(vals->size());
    for (size_t i = 0; i < vals->size(); ++i) {
      float x = (*vals)[i];
      uint16_t h = (uint8_t)bytes[2 * i] | (uint16_t)((uint8_t)bytes[2 * i + 1] << 8);
      clamped[i] = std::isinf(decode(encode(x))) && std::isfinite(x) ? decode(h) : x;
    }
    t = makeFloatTensor(t.dims(), clamped);
    return absl::OkStatus();
  }
  t.setDataType(target_);
  t.setRaw(std::move(bytes));
  return absl::OkStatus();
}

/// A Cast of `v` to `to`, placed right after v's definition so that every
/// user, in v's graph or nested in it, sees it.
Value *Converter::castOf(Value *v, DataType to) {
  // Undo an exact widening instead of casting back: Cast(Cast(x16, f32), f16) is x16.
  if (Node *d = v->definingNode())
    if (d->opType() == "Cast" && d->domain().empty() && d->numOperands() == 1 && d->operand(0))
      if (auto e = elemOf(d->operand(0)); e && *e == to && to == target_) return d->operand(0);
  Graph *g = v->getGraph();
  Node *pos = nullptr;
  if (Node *d = v->definingNode()) {
    auto it = std::next(d->getIterator());
    pos = it == g->nodes().end() ? nullptr : &*it;
  } else if (!g->nodes().empty()) {
    pos = &g->nodes().front();
  }
  Node *c = g->createNode("Cast", {v}, 1, pos, "",
                          absl::StrCat(v->name().str(), to == DataType::Float ? "_f32" : "_lp"));
  c->setAttr(intAttr("to", (int64_t)to));
  c->result(0)->setType(retyped(v->type(), to));
  ++stats_.castsInserted;
  return c->result(0);
}

absl::StatusOr<bool> Converter::run() {
  m_.graph().walkGraphs([&](Graph *g) { graphs_.push_back(g); });
  for (Graph *g : graphs_)
    for (Node &n : g->nodes())
      if (isQuantizedOp(n)) {
        remark(absl::StrCat("the model is quantized (", n.opType().str(), " at ", g->path(),
                            "): left as it is (Note [Quantized models are left alone])"));
        return false;
      }
  for (Graph *g : graphs_)
    for (Node &n : g->nodes()) planNode(n);
  blockShapeChains();

  // Decide every float32 value from the unchanged model, then change it.
  std::vector<Value *> values;
  for (Graph *g : graphs_) {
    for (Value *v : g->definitions())
      if (isF32(v)) values.push_back(v);
  }
  for (Value *v : values) toTarget_[v] = decideValue(v);
  struct Redirect {
    Value *value;
    Use *use;
  };
  std::vector<Redirect> redirects;
  for (Value *v : values)
    for (Use &u : v->uses())
      if (wantsTarget(u) != toTarget_[v]) redirects.push_back({v, &u});

  bool changed = false;
  for (Value *v : values) {
    if (!toTarget_[v]) continue;
    changed = true;
    ++stats_.valuesConverted;
    if (Tensor *t = v->initializer()) {
      if (absl::Status s = convertTensor(*t, absl::StrCat(v->getGraph()->path(), " > initializer \"",
                                                          v->name().str(), "\""));
          !s.ok())
        return s;
      ++stats_.constantsConverted;
    } else if (Node *d = v->definingNode(); d && d->domain().empty()) {
      if (isConstantNode(*d) || d->opType() == "ConstantOfShape") {
        Attribute *a = d->getAttr("value");
        std::string where = absl::StrCat(d->getGraph()->path(), " > node \"", d->name().str(),
                                         "\" (", d->opType().str(), ") result \"",
                                         v->name().str(), "\"");
        if (a && a->tensors.size() == 1) {
          if (absl::Status s = convertTensor(*a->tensors.mut()[0], where); !s.ok()) return s;
        } else if (!a) { // ConstantOfShape's default: a float32 zero
          d->setAttr(tensorAttr("value", makeTensor(target_, {1}, std::string(2, '\0'))));
        }
        ++stats_.constantsConverted;
      } else if (d->opType() == "Cast") {
        d->getAttr("to")->setInt((int64_t)target_);
        ++stats_.castsRetargeted;
      }
    }
    v->setType(retyped(v->type(), target_));
  }

  // Casts at the boundaries: one per value and type, shared by its users.
  llvm::DenseMap<Value *, Value *> castCache;
  for (const Redirect &r : redirects) {
    Value *v = r.value;
    Node *owner = r.use->getOwner();
    DataType to = toTarget_[v] ? DataType::Float : target_;
    Node *d = v->definingNode();
    if (!castCache.count(v) && to == target_ && d && d->domain().empty() &&
        (isConstantNode(*d) || d->opType() == "ConstantOfShape")) {
      // A constant kept float32 (its op cannot hold the target type at this
      // opset) that is cast to it: its mask fills are clamped all the same,
      // in float32, or the Cast would make them infinite.
      Attribute *a = d->getAttr("value");
      if (a && a->tensors.size() == 1 && a->tensors[0]->dataType() == DataType::Float)
        if (absl::Status s = convertTensor(
                *a->tensors.mut()[0],
                absl::StrCat(d->getGraph()->path(), " > node \"", d->name().str(), "\" (",
                             d->opType().str(), ") result \"", v->name().str(), "\""),
                true);
            !s.ok())
          return s;
    }
    Value *&c = castCache[v];
    if (!c) c = castOf(v, to);
    if (owner->isReturn() && owner->getGraph() == &m_.graph()) {
      // The interface keeps its name: the Cast takes it, v gets a fresh one.
      Graph *g = owner->getGraph();
      unsigned slot = r.use->getOperandNo();
      std::string name = v->name().str();
      if (absl::Status s = v->setName(g->freshName(name + "_lp")); !s.ok()) return s;
      if (absl::Status s = c->setName(name); !s.ok()) return s;
      g->setOutput(slot, c);
      castCache[v] = c;
      continue;
    }
    r.use->set(c);
    changed = true;
  }

  // Casts that now cast to their input's own type go.
  std::vector<Node *> noops;
  for (Graph *g : graphs_)
    for (Node &n : g->nodes())
      if (n.opType() == "Cast" && n.domain().empty() && n.numOperands() == 1 && n.operand(0) &&
          n.numResults() == 1 && n.result(0) && !n.result(0)->isGraphOutput())
        if (auto e = elemOf(n.operand(0)), r = elemOf(n.result(0));
            e && r && *e == *r && *e == target_)
          noops.push_back(&n);
  for (Node *n : noops) {
    n->result(0)->replaceAllUsesWith(n->operand(0));
    if (absl::Status s = n->erase(); !s.ok()) return s;
    ++stats_.castsRemoved;
  }

  // value_info records and declared output types follow the values.
  for (Graph *g : graphs_) {
    for (ValueInfoRecord &rec : g->valueInfo())
      if (rec.value && !rec.erased && rec.type && rec.type->isTensor() &&
          rec.type->hasElemType() && rec.value->type() && rec.value->type()->isTensor() &&
          rec.type->elemType() != rec.value->type()->elemType())
        rec.type = retyped(rec.type, rec.value->type()->elemType());
    for (unsigned i = 0; i < g->numOutputs(); ++i) {
      OutputInfo &info = g->outputInfo(i);
      Value *v = g->output(i);
      if (v && info.type && info.type->isTensor() && info.type->hasElemType() &&
          v->type() && v->type()->isTensor() && info.type->elemType() != v->type()->elemType())
        info.type = retyped(info.type, v->type()->elemType());
    }
  }
  for (auto &[op, n] : keptByOp_)
    remark(absl::StrCat("kept ", n, " ", op, " node(s) in float32 (",
                        blockOps_.count(op) ? "block list" : "no schema, subgraphs or block-nodes",
                        ")"));
  const char *name = target_ == DataType::Float16 ? "float16" : "bfloat16";
  if (keptForRange_)
    remark(absl::StrCat("kept ", keptForRange_, " node(s) in float32: a constant operand holds a ",
                        "value past ", name, "'s range (first: ", firstKeptForRange_, ")"));
  if (constantsFlushing_)
    remark(absl::StrCat(stats_.valuesFlushed, " nonzero value(s) in ", constantsFlushing_,
                        " constant(s) round to 0 in ", name));
  if (stats_.shapeChainNodes)
    remark(absl::StrCat("kept ", stats_.shapeChainNodes,
                        " node(s) of integer-valued float chains in float32 (shape arithmetic)"));
  return changed;
}

} // namespace

absl::StatusOr<bool> convertPrecision(Model &m, const ConvertPrecisionOptions &opts,
                                      ConvertPrecisionStatistics *stats,
                                      std::vector<std::string> *remarks) {
  if (opts.type != "float16" && opts.type != "bfloat16" && opts.type != "fp16" &&
      opts.type != "bf16")
    return absl::InvalidArgumentError(absl::StrCat(
        "convert-precision: type '", opts.type, "' is not float16 or bfloat16 (fp16, bf16)"));
  // The decisions read element types: inference first, in memory only; the
  // outputs' declared types it refines are put back (only their element
  // types change here).
  std::vector<std::pair<OutputInfo *, const Type *>> declared;
  m.graph().walkGraphs([&](Graph *g) {
    for (unsigned i = 0; i < g->numOutputs(); ++i)
      declared.push_back({&g->outputInfo(i), g->outputInfo(i).type});
  });
  ShapeInferenceOptions io;
  io.outputsOnly = true;
  if (auto r = inferShapes(m, io); !r.ok()) return r.status();
  for (auto &[info, type] : declared) info->type = type;
  ConvertPrecisionStatistics local;
  Converter c(m, opts, stats ? *stats : local, remarks);
  return c.run();
}

//===----------------------------------------------------------------------===//
// The convert-precision pass
//===----------------------------------------------------------------------===//

namespace {
class ConvertPrecisionPass : public OptionsPass<ConvertPrecisionOptions> {
public:
  ConvertPrecisionPass()
      : OptionsPass("convert-precision",
                    "Convert float32 values, initializers and Constants to float16 or bfloat16 "
                    "where the op schema allows it, with Casts at what stays float32 (graph "
                    "I/O with keep-io, blocked ops, shape arithmetic, subgraph interfaces)") {}
  absl::StatusOr<bool> run(Model &m) override {
    ConvertPrecisionStatistics s;
    std::vector<std::string> remarks;
    auto r = convertPrecision(m, optionValues(), &s, &remarks);
    if (!r.ok()) return r;
    addStats(s);
    for (std::string &w : remarks) remark(std::move(w));
    return r;
  }

private:
  Field<std::string> type_{*this, &ConvertPrecisionOptions::type, "type",
                           "the target element type", "precision",
                           {"float16", "bfloat16", "fp16", "bf16"}};
  Field<bool> keepIO_{*this, &ConvertPrecisionOptions::keepIO, "keep-io",
                      "keep the main graph's float32 inputs and outputs (Casts at them)",
                      "precision-keep-io"};
  Field<std::string> blockOps_{*this, &ConvertPrecisionOptions::blockOps, "block-ops",
                               "ops kept in float32 (comma-separated; replaces the default "
                               "list of reductions and Range)",
                               "precision-block-ops"};
  Field<std::string> blockNodes_{*this, &ConvertPrecisionOptions::blockNodes, "block-nodes",
                                 "nodes kept in float32, by name (an unnamed one by its first "
                                 "result's), comma-separated",
                                 "precision-block-nodes"};
};
} // namespace

std::unique_ptr<Pass> createConvertPrecisionPass() {
  return std::make_unique<ConvertPrecisionPass>();
}

} // namespace onnxir
