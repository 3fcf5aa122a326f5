//===- onnxir-reduce.cpp - Shrink a model to a minimal failing subgraph ---===//
//
//   onnxir-reduce MODEL -o OUT (--pipeline=P [--check-numerics] | --command='CMD {}')
//                 [--random-inputs] [--seed S] [--bind-dim SYM=V]...
//                 [--rtol R] [--atol A]
//
// "Fails" means: with --pipeline, running P on the candidate fails (a pass
// errs or leaves the IR invalid), or with --check-numerics an output of the
// optimised candidate differs from the candidate's beyond atol + rtol * |x|
// on the same inputs; with --command, CMD with {} replaced by the path of the
// candidate (a binary .onnx file) exits non-zero.
//
// Note [Reduction]
//  - The original runs once on the evaluator (random inputs from the declared
//    types, symbolic dims from --bind-dim, else 1), every main-graph node
//    result made an output: those values feed the cuts.
//  - A candidate is a range [lo, hi) of the main graph's node list (in its
//    order, which the evaluator needs topological). Its outputs are the
//    results of its nodes that something outside the range reads, that are
//    graph outputs, or that nothing reads; its cuts are the results of
//    nodes before lo that it reads (subgraph captures included). Built by
//    extractSubgraph (Note [Extraction]) on a fresh copy of the model, typed
//    by the recorded tensors, fed with the original inputs and the recorded
//    values. A range that needs a value the run did not record (a sequence,
//    an optional) is no candidate.
//  - Shrinking as Polygraphy's debug reduce: bisection, dropping a half (then
//    a quarter, ...) of the range at its end, then at its start, while the
//    check still fails; then single nodes from either end until neither can
//    go.
//  - For a pipeline, the first pass that breaks the minimal model is found
//    by bisecting the pass manager's limit (PassManagerOptions::bisectLimit,
//    onnx-opt's -opt-bisect-limit).
//
// Exit 0: a minimal failing model written to OUT; 1: the check passes on
// MODEL, nothing to reduce; 2: an error (`onnxir-reduce: error: ...`).
//
//===----------------------------------------------------------------------===//
#include "../common/BindDims.h"

#include "onnxir/Eval/Compare.h"
#include "onnxir/Eval/Evaluator.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/Passes/Pass.h"
#include "onnxir/Passes/Passes.h"
#include "onnxir/Passes/PipelineOptions.h"
#include "onnxir/Passes/Surgery.h"
#include "onnxir/Serialize/ModelFile.h"
#include "onnxir/Serialize/ProtoIO.h"
#include "onnxir/Passes/ShapeInference.h"
#include "onnxir/Support/LLVMCompat.h"

#include "absl/strings/str_cat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace onnxir;

namespace {

[[noreturn]] void fail(const std::string &msg) {
  llvm::errs() << "onnxir-reduce: error: " << msg << "\n";
  llvm::errs().flush();
  std::exit(2);
}

template <typename T> T orFail(absl::StatusOr<T> r, const std::string &where) {
  if (!r.ok()) fail(where + std::string(r.status().message()));
  return std::move(*r);
}

/// The main-graph values `n` reads: operands and what its subgraphs capture.
std::vector<Value *> reads(const Graph &g, const Node &n) {
  std::vector<Value *> out;
  for (Value *v : n.operands())
    if (v) out.push_back(v);
  for (Graph *sub : n.subgraphs())
    sub->walkGraphs([&](Graph *inner) {
      for (Node &m : inner->nodes())
        for (Value *v : m.operands())
          if (v && v->getGraph() == &g) out.push_back(v);
      for (Value *v : inner->outputs())
        if (v && v->getGraph() == &g) out.push_back(v);
    });
  return out;
}

struct Options {
  std::string model, out, pipeline, command;
  bool checkNumerics = false;
  double rtol = 1e-3, atol = 1e-7;
  EvalOptions eval;
};

/// The outcome of one check: whether it failed, and why.
struct Verdict {
  bool fails = false;
  std::string why;
};

class Reducer {
public:
  Reducer(const Options &o, std::string bytes) : o_(o), bytes_(std::move(bytes)) {}

  std::unique_ptr<Model> fresh() const {
    LiftOptions lo;
    lo.sourceName = o_.model;
    return orFail(liftModel(bytes_, lo), o_.model + ": ");
  }

  /// Runs the original with every main-graph result an output (Note
  /// [Reduction]) and indexes its nodes.
  void record(const std::map<std::string, Tensor> &inputs) {
    inputs_ = inputs;
    auto m = fresh();
    Graph &g = m->graph();
    std::set<Value *> outs;
    for (Value *v : g.outputs()) outs.insert(v);
    for (Value *v : g.outputs()) graphOutputs_.insert(v->name().str());
    unsigned k = 0;
    for (Node &n : g.nodes()) {
      std::vector<std::string> res;
      for (Value *v : n.results()) {
        if (!v) continue;
        res.push_back(v->name().str());
        defIndex_[v->name().str()] = k;
        if (!outs.count(v)) g.addOutput(v);
      }
      results_.push_back(std::move(res));
      std::vector<std::string> rd;
      for (Value *v : reads(g, n)) rd.push_back(v->name().str());
      reads_.push_back(std::move(rd));
      ++k;
    }
    for (unsigned j = 0; j < reads_.size(); ++j)
      for (const std::string &r : reads_[j]) readers_[r].insert(j);
    auto r = evaluateModel(*m, inputs, o_.eval);
    if (!r.ok())
      fail(absl::StrCat(o_.model, ": cannot record the values to feed cuts with: ",
                        r.status().message()));
    values_ = std::move(r->outputs);
  }

  unsigned numNodes() const { return (unsigned)results_.size(); }

  /// The candidate of nodes [lo, hi) with its inputs, or null when a cut
  /// has no recorded value.
  std::unique_ptr<Model> candidate(unsigned lo, unsigned hi,
                                   std::map<std::string, Tensor> &feed) const {
    std::vector<ExtractValue> cuts, outputs;
    std::set<std::string> seen;
    for (unsigned j = lo; j < hi; ++j)
      for (const std::string &r : reads_[j]) {
        auto d = defIndex_.find(r);
        if (d == defIndex_.end() || d->second >= lo || !seen.insert(r).second) continue;
        auto t = values_.find(r);
        if (t == values_.end()) return nullptr;
        cuts.push_back({r, t->second.dataType(), t->second.dims()});
      }
    for (unsigned j = lo; j < hi; ++j)
      for (const std::string &r : results_[j]) {
        bool out = graphOutputs_.count(r) > 0;
        auto u = readers_.find(r);
        if (u == readers_.end()) out = true;
        else
          for (unsigned k : u->second) out |= k < lo || k >= hi;
        if (!out) continue;
        ExtractValue e{r, std::nullopt, std::nullopt};
        if (auto t = values_.find(r); t != values_.end()) {
          e.elemType = t->second.dataType();
          e.dims = t->second.dims();
        }
        outputs.push_back(std::move(e));
      }
    auto m = fresh();
    if (absl::Status s = extractSubgraph(*m, cuts, outputs); !s.ok())
      fail(absl::StrCat(o_.model, ": nodes #", lo, "..#", hi - 1, ": ", s.message()));
    feed.clear();
    for (Value *v : m->graph().inputs()) {
      std::string n = v->name().str();
      if (auto t = values_.find(n); t != values_.end() && defIndex_.count(n)) feed[n] = t->second;
      else if (auto i = inputs_.find(n); i != inputs_.end()) feed[n] = i->second;
    }
    return m;
  }

  /// Runs the check on `m` (fed with `feed`); for a pipeline, at most
  /// `limit` passes (-1: all), the pass manager's log in `log`.
  Verdict check(const Model &m, const std::map<std::string, Tensor> &feed, int64_t limit = -1,
                std::string *log = nullptr) {
    ++checks_;
    if (!o_.command.empty()) return runCommand(m);
    auto bytes = lowerModel(m);
    if (!bytes.ok()) return {false, std::string(bytes.status().message())};
    auto opt = orFail(liftModel(*bytes), "candidate: ");
    PipelineOptions po;
    po.name = "candidate";
    po.warningHandler = [](const std::string &) {};
    po.manager.diagnosticHandler = [](const Pass &, const PassDiagnostic &) {};
    po.manager.bisectLimit = limit;
    std::string sink;
    llvm::raw_string_ostream os(sink);
    po.manager.log = &os;
    auto r = runPipeline(*opt, o_.pipeline, po);
    os.flush();
    if (log) *log = sink;
    if (!r.ok()) return {true, std::string(r.status().message())};
    if (!o_.checkNumerics) return {false, ""};
    auto before = evaluateModel(m, feed, o_.eval);
    if (!before.ok()) return {false, ""}; // nothing to compare with
    auto after = evaluateModel(*opt, feed, o_.eval);
    if (!after.ok())
      return {true, absl::StrCat("the optimised model does not run: ", after.status().message())};
    // The rule of onnxir-run --compare (Note [Comparing outputs]), the
    // original's values as the reference.
    auto diffs = compareOutputs(*after, *before, o_.rtol, o_.atol);
    if (!diffs.ok()) return {false, ""};
    for (const OutputDiff &d : *diffs) {
      if (d.ok) continue;
      switch (d.kind) {
      case OutputDiff::Kind::MissingInA: return {true, "output \"" + d.name + "\" is gone"};
      case OutputDiff::Kind::MissingInB: return {true, "output \"" + d.name + "\" is new"};
      case OutputDiff::Kind::TypeMismatch:
        return {true, "output \"" + d.name + "\": type or shape changed"};
      default:
        return {true, absl::StrCat("output \"", d.name, "\": max abs difference ", d.maxAbs,
                                   ", max rel ", d.maxRel)};
      }
    }
    return {false, ""};
  }

  int checks() const { return checks_; }

private:
  Verdict runCommand(const Model &m) {
    if (dir_.empty()) {
      llvm::SmallString<128> d;
      if (auto ec = llvm::sys::fs::createUniqueDirectory("onnxir-reduce", d))
        fail("cannot make a temporary directory: " + ec.message());
      dir_ = std::string(d);
    }
    std::string path = dir_ + "/candidate.onnx";
    SaveFileOptions so;
    so.format = ModelFormat::Binary;
    if (absl::Status s = saveModelFile(m, path, so); !s.ok())
      fail(absl::StrCat(path, ": ", s.message()));
    std::string cmd;
    for (size_t k = 0; k < o_.command.size(); ++k) {
      if (o_.command.compare(k, 2, "{}") == 0) {
        cmd += "'" + path + "'";
        ++k;
      } else {
        cmd += o_.command[k];
      }
    }
    int st = std::system((cmd + " >/dev/null 2>&1").c_str());
    if (st == -1) fail("--command: cannot run /bin/sh");
    bool bad = !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    return {bad, bad ? "the command exits " + std::to_string(WIFEXITED(st) ? WEXITSTATUS(st) : -1)
                     : ""};
  }

public:
  ~Reducer() {
    if (!dir_.empty()) {
      llvm::sys::fs::remove(dir_ + "/candidate.onnx");
      llvm::sys::fs::remove(dir_);
    }
  }

private:
  const Options &o_;
  std::string bytes_;
  std::map<std::string, Tensor> inputs_, values_;
  std::vector<std::vector<std::string>> results_, reads_;
  std::map<std::string, unsigned> defIndex_;
  std::map<std::string, std::set<unsigned>> readers_;
  std::set<std::string> graphOutputs_;
  std::string dir_;
  int checks_ = 0;
};

void printNodes(const Model &m) {
  const Graph &g = m.graph();
  for (Value *v : g.inputs())
    if (!v->hasInitializer())
      llvm::outs() << "  input " << v->name() << (v->type() ? ": " + v->type()->str() : "")
                   << "\n";
  unsigned k = 0;
  for (const Node &n : g.nodes()) {
    llvm::outs() << "  #" << k++ << " " << n.opType() << " \"" << n.name() << "\" (";
    bool first = true;
    for (Value *v : n.operands()) {
      llvm::outs() << (first ? "" : ", ") << (v ? v->name() : "");
      first = false;
    }
    llvm::outs() << ") -> (";
    first = true;
    for (Value *v : n.results()) {
      llvm::outs() << (first ? "" : ", ") << (v ? v->name() : "");
      first = false;
    }
    llvm::outs() << ")\n";
  }
  for (Value *v : g.outputs()) llvm::outs() << "  output " << v->name() << "\n";
}

/// The argument of the last pass the log says ran.
std::string lastPassRun(const std::string &log) {
  std::string last;
  llvm::StringRef rest(log);
  while (!rest.empty()) {
    auto [line, next] = rest.split('\n');
    rest = next;
    if (!line.consume_front("BISECT: running pass (")) continue;
    size_t close = line.find(") ");
    if (close != llvm::StringRef::npos) last = line.substr(close + 2).str();
  }
  return last;
}

int64_t passesRun(const std::string &log) {
  int64_t n = 0;
  llvm::StringRef rest(log);
  while (!rest.empty()) {
    auto [line, next] = rest.split('\n');
    rest = next;
    n += startsWith(line, "BISECT: running pass (");
  }
  return n;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  std::map<std::string, int64_t> bind;
  uint64_t seed = 0;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    auto value = [&](llvm::StringRef flag) -> std::string {
      llvm::StringRef rest = a.drop_front(flag.size());
      if (rest.consume_front("=")) return rest.str();
      if (i + 1 >= argc) fail(flag.str() + " needs a value");
      return argv[++i];
    };
    auto is = [&](llvm::StringRef flag) {
      return a == flag || (startsWith(a, flag) && startsWith(a.drop_front(flag.size()), "="));
    };
    auto number = [&](const std::string &s, llvm::StringRef flag) {
      char *end = nullptr;
      double d = std::strtod(s.c_str(), &end);
      if (s.empty() || *end) fail(flag.str() + ": not a number: '" + s + "'");
      return d;
    };
    if (a == "--random-inputs") continue; // the only input source, always on
    if (a == "--check-numerics") o.checkNumerics = true;
    else if (is("--pipeline")) o.pipeline = value("--pipeline");
    else if (is("--command")) o.command = value("--command");
    else if (is("--seed")) seed = (uint64_t)number(value("--seed"), "--seed");
    else if (is("--rtol")) o.rtol = number(value("--rtol"), "--rtol");
    else if (is("--atol")) o.atol = number(value("--atol"), "--atol");
    else if (is("--bind-dim")) {
      if (auto err = tools::addBindDims(value("--bind-dim"), bind)) fail(*err);
    } else if (a == "-o") {
      if (i + 1 >= argc) fail("-o needs a file name");
      o.out = argv[++i];
    } else if (startsWith(a, "-") && a != "-") fail("unknown option '" + a.str() + "'");
    else if (o.model.empty()) o.model = a.str();
    else fail("more than one model: '" + o.model + "' and '" + a.str() + "'");
  }
  if (o.model.empty())
    fail("no model (onnxir-reduce MODEL -o OUT --pipeline=P | --command='CMD {}')");
  if (o.out.empty()) fail("no output: -o OUT names the file the reduced model goes to");
  if (o.pipeline.empty() == o.command.empty())
    fail("give one check: --pipeline=P [--check-numerics] or --command='CMD {}'");
  if (o.checkNumerics && o.pipeline.empty()) fail("--check-numerics goes with --pipeline");
  if (!o.command.empty() && o.command.find("{}") == std::string::npos)
    fail("--command: no {} in '" + o.command + "' (it stands for the candidate's path)");
  o.eval.seed = seed;

  registerAllPasses();
  registerTestPasses();
  if (!o.pipeline.empty())
    if (auto p = buildPipeline(o.pipeline, PipelineOptions()); !p.ok())
      fail("--pipeline: " + std::string(p.status().message()));

  auto model = orFail(loadModelFile(o.model), "");
  std::string bytes = orFail(lowerModel(*model), o.model + ": ");
  Reducer red(o, std::move(bytes));

  std::map<std::string, Tensor> inputs;
  std::mt19937_64 rng(seed);
  std::vector<std::string> notes;
  inputs = orFail(randomInputs(*model, {}, bind, rng, &notes), "");
  for (const std::string &n : notes)
    llvm::errs() << "onnxir-reduce: note: " << n << " (--bind-dim SYM=V)\n";

  // The original, as it is.
  Verdict first = red.check(*model, inputs);
  if (!first.fails) {
    llvm::outs() << "onnxir-reduce: nothing to reduce: the check passes on " << o.model << "\n";
    return 1;
  }
  red.record(inputs);
  unsigned lo = 0, hi = red.numNodes();
  std::map<std::string, Tensor> feed;
  auto fails = [&](unsigned l, unsigned h) {
    if (l >= h) return false;
    auto m = red.candidate(l, h, feed);
    return m && red.check(*m, feed).fails;
  };
  if (!fails(lo, hi))
    fail(o.model + ": the check fails on the model but not on its main graph cut out whole "
                   "(it depends on more than the graph's nodes)");

  // Bisection: halves, quarters, ... off the end, then off the start.
  for (unsigned step = (hi - lo) / 2; step >= 1; step /= 2)
    while (hi - lo > step && fails(lo, hi - step)) hi -= step;
  for (unsigned step = (hi - lo) / 2; step >= 1; step /= 2)
    while (hi - lo > step && fails(lo + step, hi)) lo += step;
  // Linear: single nodes off either end until neither goes.
  for (bool changed = true; changed && hi - lo > 1;) {
    changed = false;
    if (fails(lo + 1, hi)) ++lo, changed = true;
    else if (hi - lo > 1 && fails(lo, hi - 1)) --hi, changed = true;
  }

  auto best = red.candidate(lo, hi, feed);
  std::string log;
  Verdict v = red.check(*best, feed, -1, &log);
  llvm::outs() << "onnxir-reduce: " << (hi - lo) << " of " << red.numNodes()
               << " nodes still fail (nodes #" << lo << "..#" << hi - 1 << " of " << o.model
               << ", " << red.checks() << " checks): " << v.why << "\n";
  printNodes(*best);

  if (!o.pipeline.empty()) {
    // The first pass that breaks it: the least bisect limit that still fails.
    std::string full;
    red.check(*best, feed, INT64_MAX, &full);
    int64_t lower = 0, upper = passesRun(full); // fails at upper
    if (red.check(*best, feed, 0).fails) {
      llvm::outs() << "first failing pass: none (the check fails before any pass runs)\n";
    } else {
      while (upper - lower > 1) {
        int64_t mid = lower + (upper - lower) / 2;
        if (red.check(*best, feed, mid).fails) upper = mid;
        else lower = mid;
      }
      std::string at;
      red.check(*best, feed, upper, &at);
      llvm::outs() << "first failing pass: " << lastPassRun(at) << " (pass " << upper
                   << ", -opt-bisect-limit=" << upper << ")\n";
    }
  }

  SaveFileOptions so;
  so.inputs.push_back(o.model);
  if (absl::Status s = saveModelFile(*best, o.out, so); !s.ok())
    fail(std::string(s.message()));
  return 0;
}
