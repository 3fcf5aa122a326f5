//===- StructuralUniquingTest.cpp - Types and dim exprs by structure ------===//
//
// Context uniques types and dim expressions by their structure (Note
// [Structural uniquing] in Context.h): the same structure gives the same
// pointer however it is spelled (TypeSpec or the get*Type helpers, interned
// or copied strings, a dim with or without its expression), any difference
// gives another pointer, and a dim's identity is its dim_param, not
// whatever `expr` a caller left in it.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "onnxir/IR/DimExpr.h"

#include <string>

using namespace onnxir;

namespace {

/// A symbolic dim whose dim_param is a copy the context never saw.
Dim copiedSymbol(const std::string &storage) {
  Dim d;
  d.kind = Dim::Kind::Symbolic;
  d.param = storage;
  return d;
}

TEST(StructuralUniquingTest, SymbolicDimsBySymbolNotSpelling) {
  Context c;
  Dim n = c.symbolicDim("N");
  const Type *a = c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{n, Dim::known(64)});
  // The same symbol from a non-interned copy of its name, with no expression.
  std::string copy = "N";
  const Type *b =
      c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{copiedSymbol(copy), Dim::known(64)});
  EXPECT_EQ(a, b);
  // From the expression, through dimOf.
  const DimExpr *ne = dimFromParam(c, "N");
  EXPECT_EQ(c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{c.dimOf(ne), Dim::known(64)}), a);
  // The stored dim holds the interned name and its expression.
  EXPECT_EQ(a->dims()[0].param.data(), n.param.data());
  EXPECT_EQ(a->dims()[0].expr, ne);
  // Another symbol, unknown, known: other types.
  EXPECT_NE(c.getTensorType(DataType::Float,
                            llvm::ArrayRef<Dim>{c.symbolicDim("M"), Dim::known(64)}),
            a);
  EXPECT_NE(c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{Dim::unknown(), Dim::known(64)}),
            a);
  EXPECT_NE(c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{Dim::known(1), Dim::known(64)}),
            a);
  EXPECT_EQ(a->str(), "float[N,64]");
}

TEST(StructuralUniquingTest, DimIdentityIsItsParamNotAStaleExpr) {
  Context c;
  Dim n = c.symbolicDim("N");
  const Type *a = c.getTensorType(DataType::Int64, llvm::ArrayRef<Dim>{n});
  // A dim naming N but carrying M's expression is still N.
  Dim stale = n;
  stale.expr = dimFromParam(c, "M");
  const Type *b = c.getTensorType(DataType::Int64, llvm::ArrayRef<Dim>{stale});
  EXPECT_EQ(a, b);
  EXPECT_EQ(b->dims()[0].expr, dimFromParam(c, "N"));
}

TEST(StructuralUniquingTest, ExpressionDims) {
  Context c;
  const DimExpr *n = dimFromParam(c, "N");
  const DimExpr *twoN = dimMul(c, dimConst(c, 2), n);
  ASSERT_TRUE(twoN);
  EXPECT_EQ(dimAdd(c, n, n), twoN); // built two ways, one expression
  EXPECT_EQ(twoN->str(), "2*N");
  EXPECT_EQ(dimFromParam(c, "2*N"), twoN); // its text reads back as it
  const Type *a = c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{c.dimOf(twoN)});
  // The dim_param text alone names the same expression, so the same type.
  std::string text = "2*N";
  EXPECT_EQ(c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{copiedSymbol(text)}), a);
  // A non-canonical spelling is a symbol of its own (Note [Lossless dim_param]).
  std::string other = "N*2";
  const Type *b = c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{copiedSymbol(other)});
  EXPECT_NE(b, a);
  EXPECT_TRUE(b->dims()[0].expr->isSymbol());
  EXPECT_EQ(b->str(), "float[N*2]");
  // Expressions: same structure, same pointer; a different one, another.
  EXPECT_EQ(dimAdd(c, twoN, dimConst(c, 1)), dimAdd(c, dimConst(c, 1), twoN));
  EXPECT_NE(dimAdd(c, twoN, dimConst(c, 1)), dimAdd(c, twoN, dimConst(c, 2)));
  EXPECT_EQ(dimConst(c, 7), dimConst(c, 7));
  EXPECT_NE(dimConst(c, 7), dimConst(c, -7));
  EXPECT_EQ(dimConst(c, -1)->value(), -1); // DenseMap's sentinel values are plain keys here
  EXPECT_EQ(dimConst(c, -2)->value(), -2);
  const DimExpr *m = dimFromParam(c, "M");
  EXPECT_EQ(dimMin(c, {n, m}), dimMin(c, {m, n}));
  EXPECT_NE(dimMin(c, {n, m}), dimMax(c, {n, m}));
  EXPECT_EQ(dimFloorDiv(c, n, m), dimFloorDiv(c, n, m));
  EXPECT_NE(dimFloorDiv(c, n, m), dimMod(c, n, m));
  EXPECT_NE(dimFloorDiv(c, n, m), dimFloorDiv(c, m, n));
  size_t exprs = c.numDimExprs();
  (void)dimAdd(c, twoN, dimConst(c, 1));
  (void)dimMin(c, {n, m});
  EXPECT_EQ(c.numDimExprs(), exprs);
}

TEST(StructuralUniquingTest, DenotationsAndOtherFields) {
  Context c;
  Dim d = Dim::known(3);
  const Type *a = c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{d});
  std::string den = "DATA_BATCH";
  d.denotation = den;
  const Type *b = c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{d});
  EXPECT_NE(a, b);
  std::string den2 = "DATA_BATCH"; // another copy of the same text
  d.denotation = den2;
  EXPECT_EQ(c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{d}), b);
  // A known dim's value and an unknown dim's leftovers: only what the type keeps counts.
  Dim u = Dim::unknown();
  u.value = 42;
  u.param = "junk";
  EXPECT_EQ(c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{u}),
            c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{Dim::unknown()}));
  // Unknown rank, rank 0 and sparse tensors differ.
  const Type *noShape = c.getTensorType(DataType::Float, kUnknownRank);
  const Type *scalar = c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{});
  EXPECT_NE(noShape, scalar);
  TypeSpec s;
  s.kind = Type::Kind::SparseTensor;
  s.hasElem = true;
  s.elem = (int32_t)DataType::Float;
  EXPECT_NE(c.getType(s), noShape);
  EXPECT_EQ(c.getType(s), c.getType(s));
  // Type denotation, opaque names, extras.
  TypeSpec t;
  t.kind = Type::Kind::Tensor;
  t.hasElem = true;
  t.elem = (int32_t)DataType::Float;
  t.denotation = "IMAGE";
  const Type *img = c.getType(t);
  EXPECT_NE(img, noShape);
  EXPECT_EQ(c.getType(t), img);
  TypeSpec o;
  o.kind = Type::Kind::Opaque;
  o.opaqueDomain = "d";
  o.opaqueName = "x";
  const Type *op1 = c.getType(o);
  o.opaqueName = "y";
  EXPECT_NE(c.getType(o), op1);
  o.opaqueName = "x";
  EXPECT_EQ(c.getType(o), op1);
  // Absent elem_type is not elem_type 0.
  TypeSpec e0;
  e0.kind = Type::Kind::Tensor;
  e0.hasElem = true;
  TypeSpec eAbsent;
  eAbsent.kind = Type::Kind::Tensor;
  EXPECT_NE(c.getType(e0), c.getType(eAbsent));
}

TEST(StructuralUniquingTest, SequencesMapsOptionals) {
  Context c;
  const Type *f = c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{c.symbolicDim("N")});
  const Type *g = c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{c.symbolicDim("M")});
  const Type *seqF = c.getSequenceType(f);
  EXPECT_EQ(c.getSequenceType(f), seqF);
  EXPECT_NE(c.getSequenceType(g), seqF);
  EXPECT_NE(c.getOptionalType(f), seqF);
  EXPECT_EQ(c.getOptionalType(seqF), c.getOptionalType(c.getSequenceType(f)));
  EXPECT_EQ(c.getOptionalType(seqF)->nestingDepth(), 2u);
  const Type *mapF = c.getMapType(DataType::Int64, f);
  EXPECT_EQ(c.getMapType(DataType::Int64, f), mapF);
  EXPECT_NE(c.getMapType(DataType::String, f), mapF);
  EXPECT_NE(c.getMapType(DataType::Int64, g), mapF);
  // The helpers and a TypeSpec agree.
  TypeSpec s;
  s.kind = Type::Kind::Map;
  s.hasElem = true;
  s.elem = (int32_t)DataType::Int64;
  s.inner = f;
  EXPECT_EQ(c.getType(s), mapF);
  TypeSpec q;
  q.kind = Type::Kind::Sequence;
  q.inner = f;
  EXPECT_EQ(c.getType(q), seqF);
  q.inner = nullptr; // seq with no element type
  EXPECT_NE(c.getType(q), seqF);
  EXPECT_EQ(c.getType(q), c.getType(q));
  EXPECT_EQ(mapF->str(), "map(int64, float[N])");
}

TEST(StructuralUniquingTest, SubByteElementTypes) {
  Context c;
  const DataType subByte[] = {DataType::Int4, DataType::Uint4, DataType::Float4E2M1,
                              DataType::Uint2, DataType::Int2};
  for (DataType a : subByte) {
    const Type *t = c.getTensorType(a, llvm::ArrayRef<int64_t>{3, 5});
    EXPECT_EQ(c.getTensorType(a, llvm::ArrayRef<int64_t>{3, 5}), t);
    EXPECT_EQ(t->elemType(), a);
    for (DataType b : subByte) {
      if (b != a) {
        EXPECT_NE(c.getTensorType(b, llvm::ArrayRef<int64_t>{3, 5}), t);
      }
    }
    EXPECT_NE(c.getTensorType(DataType::Int8, llvm::ArrayRef<int64_t>{3, 5}), t);
  }
  EXPECT_EQ(c.getTensorType(DataType::Int4, llvm::ArrayRef<int64_t>{3, 5})->str(), "int4[3,5]");
}

TEST(StructuralUniquingTest, ManyTypesStayDistinct) {
  // Enough types to grow the table several times: each stays findable.
  Context c;
  std::vector<const Type *> made;
  for (int64_t i = 0; i < 3000; ++i)
    made.push_back(c.getTensorType(DataType::Float, llvm::ArrayRef<int64_t>{i, i % 7}));
  size_t n = c.numTypes();
  for (int64_t i = 0; i < 3000; ++i)
    EXPECT_EQ(c.getTensorType(DataType::Float, llvm::ArrayRef<int64_t>{i, i % 7}), made[i]);
  EXPECT_EQ(c.numTypes(), n);
}

// Note [Types a shape gives back] (DimExpr.cpp): where isTensorTypeOf and
// remakesItself say yes, the lookup they spare (dimOf per expression, then
// getTensorType) returns that very type; where it would return another, they
// say no. A negative known dim and denotations are the traps: the lookup
// turns the first into an unknown dim and drops the others.
TEST(StructuralUniquingTest, TypesAShapeGivesBack) {
  Context c;
  auto exprsOf = [&](const Type *t) {
    std::vector<const DimExpr *> e;
    for (const Dim &d : t->dims()) e.push_back(c.exprOf(d));
    return e;
  };
  auto lookedUp = [&](DataType el, const std::vector<const DimExpr *> &es) {
    std::vector<Dim> ds;
    for (const DimExpr *e : es) ds.push_back(c.dimOf(e));
    return c.getTensorType(el, llvm::ArrayRef<Dim>(ds));
  };
  auto spec = [](std::vector<Dim> dims) {
    TypeSpec s;
    s.kind = Type::Kind::Tensor;
    s.hasElem = true;
    s.elem = static_cast<int32_t>(DataType::Float);
    s.hasShape = true;
    s.dims = std::move(dims);
    return s;
  };
  const DimExpr *n = dimFromParam(c, "N");
  Dim nd = c.dimOf(n);
  Dim twoN = c.dimOf(dimMul(c, dimConst(c, 2), n));

  // Plain types: given back, without the lookup.
  std::vector<const Type *> plain = {
      c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{nd, Dim::known(64)}),
      c.getTensorType(DataType::Int64, llvm::ArrayRef<Dim>{}),
      c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{Dim::unknown(), Dim::known(3)}),
      c.getTensorType(DataType::Float, llvm::ArrayRef<Dim>{twoN, nd, Dim::known(0)}),
      c.getTensorType(DataType::Bool, llvm::ArrayRef<Dim>{Dim::known(300), Dim::known(1)}),
      c.getType(spec({c.symbolicDim("seq"), Dim::known(8)})),
  };
  for (const Type *t : plain) {
    SCOPED_TRACE(t->str());
    std::vector<const DimExpr *> e = exprsOf(t);
    EXPECT_TRUE(c.isTensorTypeOf(t, t->elemType(), e));
    EXPECT_TRUE(c.remakesItself(t));
    EXPECT_EQ(lookedUp(t->elemType(), e), t);
    // Another element type, or other dims: not this type.
    EXPECT_FALSE(c.isTensorTypeOf(t, DataType::Double, e));
    if (!e.empty()) {
      std::vector<const DimExpr *> other = e;
      other.back() = dimConst(c, 7);
      EXPECT_FALSE(c.isTensorTypeOf(t, t->elemType(), other));
      other.back() = nullptr;
      EXPECT_EQ(c.isTensorTypeOf(t, t->elemType(), other), lookedUp(t->elemType(), other) == t);
    }
    e.push_back(nullptr);
    EXPECT_FALSE(c.isTensorTypeOf(t, t->elemType(), e));
  }

  // Types the lookup would not give back: no.
  Dim negative = Dim::known(-1);
  Dim denoted = nd;
  denoted.denotation = "DATA_BATCH";
  TypeSpec withDenotation = spec({nd, Dim::known(64)});
  withDenotation.denotation = "TENSOR";
  std::vector<const Type *> notPlain = {
      c.getType(spec({negative, Dim::known(64)})),
      c.getType(spec({denoted, Dim::known(64)})),
      c.getType(withDenotation),
  };
  for (const Type *t : notPlain) {
    SCOPED_TRACE(t->str());
    std::vector<const DimExpr *> e = exprsOf(t);
    EXPECT_NE(lookedUp(t->elemType(), e), t);
    EXPECT_FALSE(c.isTensorTypeOf(t, t->elemType(), e));
    EXPECT_FALSE(c.remakesItself(t));
  }
  // No shape, or no tensor: nothing to compare with.
  const Type *unranked = c.getTensorType(DataType::Float, kUnknownRank);
  EXPECT_FALSE(c.isTensorTypeOf(unranked, DataType::Float, {}));
  EXPECT_FALSE(c.remakesItself(unranked));
  EXPECT_FALSE(c.remakesItself(c.getSequenceType(plain[0])));
  EXPECT_FALSE(c.remakesItself(nullptr));
  EXPECT_FALSE(c.isTensorTypeOf(nullptr, DataType::Float, {}));
}

} // namespace
