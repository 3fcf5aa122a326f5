//===- IR.h - Everything of the onnxir object model -----------------------===//
#ifndef ONNXIR_IR_H
#define ONNXIR_IR_H
#include "onnxir/IR/Builder.h"
#include "onnxir/IR/Context.h"
#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Limits.h"
#include "onnxir/IR/Function.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Opset.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"
#include "onnxir/IR/Verifier.h"
#endif
