# lit_pipelines.sh: sourced by the walks that re-run lit models outside lit:
# those of the rewrite folders (and REWRITE_MODELS) in test/Ort/rewrites.sh
# on onnxruntime and test/Eval/rewrites.sh on the reference evaluator, and
# the adapter and expansion models in test/Ort/convert_*.sh and
# expand_functions.sh (pass_models, pass_model).
#
# REWRITE_FOLDERS: the folders of test/Passes whose models show a rewrite
# (positive cases and near misses alike).
REWRITE_FOLDERS="simplify fuse fold cse dedup-initializers eliminate-identity constants dce topo rewriter freeze-initializer-inputs qdq monotone-argmax reshape-targets"
# REWRITE_MODELS: models of the operator folders (test/Ops/<Family>/, paths
# from test/ without .onnxtxt) walked with them: the fold tests of one kernel
# that left test/Passes/fold for their op's folder (issue 39).
REWRITE_MODELS="Ops/Tensor/onehot-missing-indices-fold Ops/Tensor/slice-bad-axis-fold Ops/Tensor/split1-input-fold"

# rewrite_models SRC: "NAME PATH" of each model the walks take, one a line:
# NAME is FOLDER/STEM for the models of REWRITE_FOLDERS (test/Passes/FOLDER),
# FAMILY/STEM for those of REWRITE_MODELS.
rewrite_models() {
  local dir t m
  for dir in $REWRITE_FOLDERS; do
    for t in "$1"/test/Passes/"$dir"/*.onnxtxt; do
      [ -e "$t" ] && echo "$dir/$(basename "$t" .onnxtxt) $t"
    done
  done
  for m in $REWRITE_MODELS; do
    echo "${m#Ops/} $1/test/$m.onnxtxt"
  done
}

# lit_pipelines FILE: prints each distinct onnx-opt pipeline of FILE's RUN
# lines that reads the model itself (`onnx-opt %s FLAGS ...`), one a line,
# without %s and without what only says how the result is printed (what
# follows --emit, -o, a redirection or a pipe; -stats, --fusion-report and
# --summary change no model). RUN lines checking structure alone
# (--verify=structure: a model left invalid on purpose) are left out.
lit_pipelines() {
  grep -E '^(#|//) RUN: +onnx-opt ' "$1" |
    sed -E 's/^(#|\/\/) RUN: +onnx-opt //; s/ ?(--emit|-o |2>|>|\|).*//' |
    grep -E '(^| )%s( |$)' | grep -v -- '--verify=structure' |
    sed -E 's/(^| )%s( |$)/ /g; s/(^| )(-stats|--fusion-report|--summary)( |$)/ /g; s/^ +| +$//g' |
    sort -u
}

# pass_models SRC FOLDER PASS: the .onnxtxt models of test/Passes/FOLDER,
# then those of the operator folders (test/Ops/<Family>/) with a RUN line
# running PASS (an op's adapter and expansion tests live with the op's other
# tests, issue 39), one path a line. Their names (file names without
# .onnxtxt) are distinct: the walks name their work files after them.
pass_models() {
  local t
  for t in "$1"/test/Passes/"$2"/*.onnxtxt; do
    [ -e "$t" ] && echo "$t"
  done
  for t in "$1"/test/Ops/*/*.onnxtxt; do
    grep -q -E "^(#|//) RUN: .*$3" "$t" && echo "$t"
  done
}

# pass_model SRC FOLDER NAME: the path of the model NAME of pass_models
# (test/Passes/FOLDER/NAME.onnxtxt if absent: the caller's read fails there).
pass_model() {
  local t
  for t in "$1"/test/Passes/"$2"/"$3".onnxtxt "$1"/test/Ops/*/"$3".onnxtxt; do
    [ -e "$t" ] && { echo "$t"; return; }
  done
  echo "$1/test/Passes/$2/$3.onnxtxt"
}
