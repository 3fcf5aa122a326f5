# lit_pipelines.sh: sourced by the walks that re-run the lit models of the
# rewrite folders (and REWRITE_MODELS) outside lit (test/Ort/rewrites.sh on
# onnxruntime, test/Eval/rewrites.sh on the reference evaluator).
#
# REWRITE_FOLDERS: the folders of test/Passes whose models show a rewrite
# (positive cases and near misses alike).
REWRITE_FOLDERS="simplify fuse fold cse dedup-initializers eliminate-identity constants dce topo rewriter"
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
