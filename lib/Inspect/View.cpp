//===- View.cpp - A graph as Graphviz DOT or a Mermaid flowchart ----------===//
//
// One walk of the graph drives either format through a small emitter: node
// boxes (operators: op type and name), graph inputs, initializers and
// outputs each with a shape of their own, edges labelled with the type of
// the value they carry, and subgraphs (If/Loop/Scan bodies) as clusters
// beside their node. A value a subgraph captures from an enclosing graph is
// a dashed edge from where that value is defined outside; a body's outputs
// reach their node by a dotted edge named after the attribute.
//
// Names are user data: every one is escaped for the target syntax (quotes,
// backslashes, newlines, control characters, invalid UTF-8), and the ids the
// syntax sees are our own (n3, i0, ...), never names, so any name parses.
//
//===----------------------------------------------------------------------===//
#include "onnxir/Inspect/Inspect.h"

#include "onnxir/IR/Attribute.h"
#include "onnxir/IR/DataType.h"
#include "onnxir/IR/Graph.h"
#include "onnxir/IR/Model.h"
#include "onnxir/IR/Node.h"
#include "onnxir/IR/Tensor.h"
#include "onnxir/IR/Type.h"
#include "onnxir/IR/Value.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <spawn.h>
#include <sys/wait.h>
#include <vector>

extern char **environ;

namespace onnxir {

namespace {

/// Length of the valid UTF-8 sequence starting at s[i], or 0.
size_t utf8Length(llvm::StringRef s, size_t i) {
  unsigned char c = (unsigned char)s[i];
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || (n > 1 && c < 0xC2) || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if (((unsigned char)s[i + k] >> 6) != 2) return 0;
  return n;
}

/// Calls `fn(piece, isChar)` for each valid UTF-8 character of `s`, with
/// invalid bytes replaced by '?'.
template <typename Fn> void forEachChar(llvm::StringRef s, Fn fn) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8Length(s, i);
    if (!n) {
      fn(llvm::StringRef("?"));
      ++i;
    } else {
      fn(s.substr(i, n));
      i += n;
    }
  }
}

/// The inside of a DOT double-quoted string showing `s`: a backslash would
/// start an escape (\n, \l, \N), a quote would end the string.
std::string dotEscape(llvm::StringRef s) {
  std::string out;
  forEachChar(s, [&](llvm::StringRef ch) {
    char c = ch[0];
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else if (ch.size() == 1 && ((unsigned char)c < 0x20 || c == 0x7f)) out += ' ';
    else out += ch.str();
  });
  return out;
}

/// The inside of a Mermaid quoted label showing `s`: Mermaid reads `#...;`
/// as an entity code and some characters as markup, so those become codes.
std::string mermaidEscape(llvm::StringRef s) {
  std::string out;
  forEachChar(s, [&](llvm::StringRef ch) {
    char c = ch[0];
    if (c == '\n') out += "<br/>";
    else if (ch.size() == 1 && ((unsigned char)c < 0x20 || c == 0x7f)) out += ' ';
    else if (ch.size() == 1 && llvm::StringRef("\"#<>&|;`{}[]()\\").contains(c))
      out += "#" + std::to_string((int)(unsigned char)c) + ";";
    else out += ch.str();
  });
  return out;
}

enum class Shape { Op, Input, Initializer, Output, Group };
enum class EdgeStyle { Data, Captured, BodyOutput };

/// The syntax of one format: lines of labels joined per format.
class Emitter {
public:
  explicit Emitter(ViewFormat f) : f_(f) {}

  void begin() {
    if (f_ == ViewFormat::Dot)
      os_ << "digraph model {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
             "  edge [fontname=\"Helvetica\", fontsize=8];\n";
    else
      os_ << "flowchart TD\n";
  }
  void node(const std::string &id, Shape shape, llvm::ArrayRef<std::string> lines) {
    indent();
    if (f_ == ViewFormat::Dot) {
      os_ << id << " [label=\"" << joinLabel(lines) << "\"";
      switch (shape) {
      case Shape::Op: os_ << ", shape=box, style=\"rounded,filled\", fillcolor=\"#f5f5f5\""; break;
      case Shape::Input: os_ << ", shape=ellipse, style=filled, fillcolor=\"#cfe8ff\""; break;
      case Shape::Initializer:
        os_ << ", shape=note, style=filled, fillcolor=\"#eeeeee\", fontsize=8";
        break;
      case Shape::Output: os_ << ", shape=ellipse, style=filled, fillcolor=\"#d4f7d4\""; break;
      case Shape::Group: os_ << ", shape=box3d, style=filled, fillcolor=\"#fff3c4\""; break;
      }
      os_ << "];\n";
    } else {
      static const char *kOpen[] = {"[\"", "([\"", "[(\"", "([\"", "[[\""};
      static const char *kClose[] = {"\"]", "\"])", "\")]", "\"])", "\"]]"};
      os_ << id << kOpen[(int)shape] << joinLabel(lines) << kClose[(int)shape] << "\n";
      if (shape != Shape::Op) classes_.push_back({id, shape});
    }
  }
  void beginCluster(const std::string &id, const std::string &label) {
    indent();
    if (f_ == ViewFormat::Dot)
      os_ << "subgraph cluster_" << id << " {\n", indent(1),
          os_ << "label=\"" << dotEscape(label) << "\";\n", indent(1),
          os_ << "style=dashed;\n";
    else
      os_ << "subgraph " << id << "[\"" << mermaidEscape(label) << "\"]\n";
    ++depth_;
  }
  void endCluster() {
    --depth_;
    indent();
    os_ << (f_ == ViewFormat::Dot ? "}\n" : "end\n");
  }
  /// Edges go after every node and cluster: a DOT edge naming a node not
  /// yet declared would declare it in whatever cluster the edge is in.
  void edge(const std::string &from, const std::string &to, const std::string &label,
            EdgeStyle style) {
    std::string e;
    if (f_ == ViewFormat::Dot) {
      e = "  " + from + " -> " + to + " [label=\"" + dotEscape(label) + "\"";
      if (style == EdgeStyle::Captured) e += ", style=dashed";
      if (style == EdgeStyle::BodyOutput) e += ", style=dotted";
      e += "];\n";
    } else {
      const char *arrow = style == EdgeStyle::Data ? " -->" : style == EdgeStyle::Captured
                                                                  ? " -.->"
                                                                  : " ==>";
      e = "  " + from + arrow;
      if (!label.empty()) e += "|\"" + mermaidEscape(label) + "\"|";
      e += " " + to + "\n";
    }
    edges_.push_back(std::move(e));
  }
  std::string finish() {
    for (const std::string &e : edges_) os_ << e;
    if (f_ == ViewFormat::Dot) {
      os_ << "}\n";
    } else {
      os_ << "  classDef input fill:#cfe8ff\n  classDef init fill:#eeeeee\n"
             "  classDef output fill:#d4f7d4\n  classDef group fill:#fff3c4\n";
      static const char *kClass[] = {"", "input", "init", "output", "group"};
      for (auto &[id, shape] : classes_)
        os_ << "  class " << id << " " << kClass[(int)shape] << "\n";
    }
    return out_;
  }

private:
  std::string joinLabel(llvm::ArrayRef<std::string> lines) {
    std::string s;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i) s += f_ == ViewFormat::Dot ? "\\n" : "<br/>";
      s += f_ == ViewFormat::Dot ? dotEscape(lines[i]) : mermaidEscape(lines[i]);
    }
    return s;
  }
  void indent(int extra = 0) {
    for (int i = 0; i < depth_ + 1 + extra; ++i) os_ << "  ";
  }

  ViewFormat f_;
  std::string out_;
  llvm::raw_string_ostream os_{out_};
  int depth_ = 0;
  std::vector<std::string> edges_;
  std::vector<std::pair<std::string, Shape>> classes_;
};

//===--- Note [Collapsed views] -------------------------------------------===//
// Exported models name nodes by module path (`/encoder/layer.3/attn/MatMul`),
// so a name prefix is a natural unit of a big graph. With --collapse=N the
// main graph's nodes whose names split (on '/' and '.', empty parts dropped)
// into more than N parts are grouped by their first N parts; a group of two
// or more nodes is drawn as one box `prefix (K nodes)`, edges between groups
// are drawn once per pair (labelled with the first value's type and how many
// more values), and edges inside a group are not drawn, nor are the
// subgraphs of its nodes. Inputs, initializers and outputs stay visible.
//===----------------------------------------------------------------------===//

class ViewBuilder {
public:
  ViewBuilder(const ViewOptions &o) : opts_(o), e_(o.format) {}

  std::string run(const Graph &g) {
    e_.begin();
    if (opts_.collapseDepth) group(g);
    emitGraph(g, "");
    for (auto &[key, lbl] : groupEdges_)
      e_.edge(key.first, key.second,
              lbl.second > 1 ? lbl.first + " (+" + std::to_string(lbl.second - 1) + ")"
                             : lbl.first,
              EdgeStyle::Data);
    return e_.finish();
  }

private:
  std::string fresh(const char *prefix) { return prefix + std::to_string(counter_++); }

  /// An edge's label: the value's type, an initializer's from its tensor;
  /// none when unknown (run -infer-shapes first to see them all).
  static std::string typeLabel(const Value *v) {
    if (v->type()) return v->type()->str();
    if (const Tensor *t = v->initializer()) {
      std::string s = dataTypeName(t->dataType()).str() + "[";
      for (size_t i = 0; i < t->dims().size(); ++i)
        s += (i ? "," : "") + std::to_string(t->dims()[i]);
      return s + "]";
    }
    return "";
  }

  void group(const Graph &g) {
    std::map<std::string, std::vector<const Node *>> groups;
    for (const Node &n : g.nodes()) {
      llvm::SmallVector<llvm::StringRef, 8> parts, kept;
      n.name().split(parts, '/');
      for (llvm::StringRef p : parts) {
        llvm::SmallVector<llvm::StringRef, 4> sub;
        p.split(sub, '.');
        for (llvm::StringRef s : sub)
          if (!s.empty()) kept.push_back(s);
      }
      if (kept.size() <= opts_.collapseDepth) continue;
      std::string key;
      for (unsigned i = 0; i < opts_.collapseDepth; ++i) key += (i ? "/" : "") + kept[i].str();
      groups[key].push_back(&n);
    }
    for (auto &[key, members] : groups) {
      if (members.size() < 2) continue;
      std::string id = fresh("g");
      groupLabels_.push_back({id, {key, std::to_string(members.size()) + " nodes"}});
      for (const Node *n : members) groupOf_[n] = id;
    }
  }

  /// The id of the box an edge from `v` starts at (declared as needed).
  std::string sourceOf(const Value *v) {
    if (Node *def = v->definingNode()) {
      auto it = groupOf_.find(def);
      return it != groupOf_.end() ? it->second : nodeIds_.lookup(def);
    }
    return valueIds_.lookup(v);
  }

  void emitGraph(const Graph &g, const std::string &outputTarget) {
    for (Value *v : g.inputs()) {
      std::string id = fresh("i");
      valueIds_[v] = id;
      e_.node(id, Shape::Input, {v->name().str(), typeLabel(v)});
    }
    for (Value *v : g.initializers()) {
      if (v->isGraphInput()) continue; // drawn as an input
      std::string id = fresh("c");
      valueIds_[v] = id;
      e_.node(id, Shape::Initializer, {v->name().str(), typeLabel(v)});
    }
    if (&g == topGraph_ || !topGraph_) {
      topGraph_ = &g;
      for (auto &[id, lines] : groupLabels_) e_.node(id, Shape::Group, lines);
    }
    for (const Node &n : g.nodes()) {
      if (groupOf_.count(&n)) continue;
      std::string id = fresh("n");
      nodeIds_[&n] = id;
      std::vector<std::string> lines{n.domain().empty()
                                         ? n.opType().str()
                                         : (n.domain() + "." + n.opType()).str()};
      if (!n.name().empty()) lines.push_back(n.name().str());
      e_.node(id, Shape::Op, lines);
      for (unsigned a = 0; a < n.numAttributes(); ++a) {
        const Attribute &attr = n.attribute(a);
        for (unsigned k = 0; k < attr.numGraphs(); ++k) {
          std::string label = n.opType().str() + (n.name().empty() ? "" : " " + n.name().str()) +
                              ": " + attr.name();
          if (attr.numGraphs() > 1) label += "[" + std::to_string(k) + "]";
          e_.beginCluster(fresh("s"), label);
          emitGraph(*attr.graph(k), id);
          bodyEdges(*attr.graph(k), id, attr.name());
          e_.endCluster();
        }
      }
    }
    // Edges into this graph's nodes (after the nested graphs, whose values
    // have ids now); captured values are dashed.
    for (const Node &n : g.nodes()) {
      if (groupOf_.count(&n)) {
        for (unsigned i = 0; i < n.numOperands(); ++i)
          if (Value *v = n.operand(i)) groupEdge(sourceOf(v), groupOf_[&n], v);
        continue;
      }
      for (unsigned i = 0; i < n.numOperands(); ++i) {
        Value *v = n.operand(i);
        if (!v) continue;
        bool captured = v->getGraph() != &g;
        std::string from = sourceOf(v);
        if (groupOf_.count(v->definingNode()) && !captured)
          groupEdge(from, nodeIds_[&n], v);
        else
          e_.edge(from, nodeIds_[&n], typeLabel(v), captured ? EdgeStyle::Captured : EdgeStyle::Data);
      }
    }
    (void)outputTarget;
    if (&g == topGraph_) {
      for (unsigned i = 0; i < g.numOutputs(); ++i) {
        Value *v = g.output(i);
        std::string id = fresh("o");
        e_.node(id, Shape::Output, {v->name().str()});
        std::string from = sourceOf(v);
        const Type *t = g.outputInfo(i).type ? g.outputInfo(i).type : v->type();
        if (!from.empty()) e_.edge(from, id, t ? t->str() : typeLabel(v), EdgeStyle::Data);
      }
    }
  }

  /// A body's outputs: boxes inside its cluster, joined to their node.
  void bodyEdges(const Graph &body, const std::string &nodeId, const std::string &attr) {
    for (unsigned i = 0; i < body.numOutputs(); ++i) {
      Value *v = body.output(i);
      std::string id = fresh("o");
      e_.node(id, Shape::Output, {v->name().str()});
      std::string from = sourceOf(v);
      if (!from.empty())
        e_.edge(from, id, typeLabel(v),
                v->getGraph() != &body ? EdgeStyle::Captured : EdgeStyle::Data);
      if (i == 0) e_.edge(id, nodeId, attr, EdgeStyle::BodyOutput);
    }
  }

  void groupEdge(const std::string &from, const std::string &to, const Value *v) {
    if (from.empty() || from == to) return;
    auto &slot = groupEdges_[{from, to}];
    if (!slot.second) slot.first = typeLabel(v);
    ++slot.second;
  }

  const ViewOptions &opts_;
  Emitter e_;
  unsigned counter_ = 0;
  const Graph *topGraph_ = nullptr;
  llvm::DenseMap<const Node *, std::string> nodeIds_;
  llvm::DenseMap<const Value *, std::string> valueIds_;
  std::map<const Node *, std::string> groupOf_;
  std::vector<std::pair<std::string, std::vector<std::string>>> groupLabels_;
  std::map<std::pair<std::string, std::string>, std::pair<std::string, int>> groupEdges_;
};

} // namespace

std::string renderGraphView(const Model &m, const ViewOptions &opts) {
  return ViewBuilder(opts).run(m.graph());
}

absl::StatusOr<std::string> renderSvgWithGraphviz(const std::string &dotText) {
  auto dot = llvm::sys::findProgramByName("dot");
  if (!dot)
    return absl::NotFoundError("--emit=svg needs Graphviz's `dot` on PATH (Debian: apt-get "
                               "install graphviz); or write --emit=dot and run `dot -Tsvg`");
  llvm::SmallString<128> in, out, err;
  if (llvm::sys::fs::createTemporaryFile("onnxir-view", "dot", in) ||
      llvm::sys::fs::createTemporaryFile("onnxir-view", "svg", out) ||
      llvm::sys::fs::createTemporaryFile("onnxir-view", "err", err))
    return absl::InternalError("cannot create a temporary file for `dot`");
  auto cleanup = [&] {
    llvm::sys::fs::remove(in);
    llvm::sys::fs::remove(out);
    llvm::sys::fs::remove(err);
  };
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (!ec) os << dotText;
    if (ec || os.has_error()) {
      cleanup();
      return absl::InternalError("cannot write a temporary file for `dot`");
    }
  }
  // posix_spawn rather than llvm::sys::ExecuteAndWait, whose optional
  // arguments changed type between LLVM 14 and 19.
  std::string inPath(in.str()), outPath(out.str()), errPath(err.str());
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, inPath.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, outPath.c_str(), O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_addopen(&fa, 2, errPath.c_str(), O_WRONLY | O_TRUNC, 0);
  std::string prog = *dot;
  char arg0[] = "dot", arg1[] = "-Tsvg";
  char *argv[] = {arg0, arg1, nullptr};
  pid_t pid;
  int rc = -1;
  std::string msg;
  if (int e = posix_spawn(&pid, prog.c_str(), &fa, nullptr, argv, environ); e != 0) {
    msg = std::strerror(e);
  } else {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&fa);
  auto svg = llvm::MemoryBuffer::getFile(out);
  auto errText = llvm::MemoryBuffer::getFile(err);
  cleanup();
  if (rc != 0 || !svg) {
    std::string why = msg.empty() && errText ? (*errText)->getBuffer().trim().str() : msg;
    return absl::InternalError("`" + *dot + " -Tsvg` failed (exit " + std::to_string(rc) +
                               ")" + (why.empty() ? "" : ": " + why));
  }
  return (*svg)->getBuffer().str();
}

} // namespace onnxir
