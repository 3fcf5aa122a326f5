#!/usr/bin/env python3
"""Differential test of `onnx-opt --verify=schema` against python3-onnx's checker.

For every model of the valid corpus (ONNX backend test data, ../shared/models)
and of the hand-written invalid set (test/Schema/invalid/*.onnxtxt, written to
binary by onnx-opt first), onnx.checker.check_model(m, full_check=True) is
run. Every model it rejects must be rejected by `onnx-opt --verify=schema`
too, except the intended differences listed below (each with its reason).
Models of the invalid set the checker accepts are printed (we are stricter
there) but only fail the test if they are not listed in STRICTER below.

Usage: differential.py ONNX_OPT TESTDATA_DIR SHARED_DIR SCHEMA_TEST_DIR WORK_DIR
"""
import glob
import os
import subprocess
import sys

import onnx
import onnx.checker

ONNX_OPT, TESTDATA, SHARED, TESTS, WORK = sys.argv[1:6]

# Models the checker rejects and we accept, by path suffix, with the reason.
INTENDED = {
    # python's full_check infers Constant's output type from its `value` and
    # finds int64, which Constant-1/Constant-9 (T: float16/float/double) do
    # not allow. We check declared types only (no inference), and the corpus
    # counts these models as valid: every runtime runs them.
    "pytorch-converted/test_PixelShuffle/model.onnx": "Constant-1 int64 value (inferred type)",
    "pytorch-operator/test_operator_repeat/model.onnx": "Constant-1 int64 value (inferred type)",
    "pytorch-operator/test_operator_repeat_dim_overflow/model.onnx": "Constant-1 int64 value (inferred type)",
}

# Invalid models the checker (onnx 1.12) accepts, with why we reject them.
STRICTER = {
    # A homogeneous variadic binds its type variable once; onnx 1.12's type
    # check (shape inference) reads the first input's type and does not
    # compare the others with it.
    "concat-heterogeneous": "homogeneous variadic with two types",
    "sum-heterogeneous": "homogeneous variadic with two types",
    # The checker does not compare a call of a model-local function with the
    # function's signature.
    "function-call-too-many-inputs": "local function call arity",
    "function-call-too-many-outputs": "local function call arity",
    # Normalizer has no type inference in onnx 1.12, so the checker never
    # compares its input type with the constraint T.
    "ml-normalizer-bool": "ai.onnx.ml input type constraint",
}


def check(path):
    """The checker's complaint about `path`, or None."""
    try:
        onnx.checker.check_model(onnx.load(path), full_check=True)
        return None
    except Exception as e:  # ValidationError, InferenceError, ...
        return (str(e).strip().splitlines() or ["(no message)"])[0][:300]


def ours(path):
    """Our --verify=schema complaint about `path`, or None."""
    r = subprocess.run([ONNX_OPT, "--verify=schema", path, "-o", os.devnull],
                       capture_output=True, text=True)
    if r.returncode == 0:
        return None
    return r.stderr.strip().replace("\n", " | ")[:300]


# The backend corpus (1,072 models) and the shared models (16): a walk that
# finds far fewer has lost its data and compares nothing (issue 48 item 4).
MIN_CORPUS = 1000


def main():
    failures = []
    corpus = sorted(glob.glob(os.path.join(TESTDATA, "**", "*.onnx"), recursive=True) +
                    glob.glob(os.path.join(SHARED, "models", "**", "*.onnx"), recursive=True))
    if len(corpus) < MIN_CORPUS:
        failures.append(f"only {len(corpus)} corpus models under {TESTDATA} and {SHARED}/models "
                        f"(at least {MIN_CORPUS} expected)")
    seen_intended = set()
    for path in corpus:
        theirs = check(path)
        if theirs is None:
            continue
        key = next((k for k in INTENDED if path.endswith(k)), None)
        if key:
            seen_intended.add(key)
            continue
        if ours(path) is None:
            failures.append(f"{path}: the checker rejects it ({theirs}) but we accept it")
    for k in INTENDED:
        if k not in seen_intended and any(p.endswith(k) for p in corpus):
            failures.append(f"{k}: listed as an intended difference but the checker accepts it now")

    invalid = sorted(glob.glob(os.path.join(TESTS, "invalid", "*.onnxtxt")))
    if len(invalid) < 60:
        failures.append(f"only {len(invalid)} invalid models in {TESTS}/invalid")
    os.makedirs(WORK, exist_ok=True)
    stricter = []
    for src in invalid:
        name = os.path.splitext(os.path.basename(src))[0]
        binary = os.path.join(WORK, name + ".onnx")
        # These models are invalid on purpose: --verify=structure writes
        # them as they are (by default onnx-opt refuses most of them).
        r = subprocess.run([ONNX_OPT, "--verify=structure", src, "-o", binary],
                           capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{src}: cannot write it as binary: {r.stderr.strip()}")
            continue
        theirs = check(binary)
        mine = ours(binary)
        if mine is None:
            failures.append(f"{src}: we accept an invalid model (checker: {theirs})")
        elif theirs is None:
            stricter.append(name)
            if name not in STRICTER:
                failures.append(f"{src}: the checker accepts it, we say: {mine}; "
                                "list it in STRICTER with the reason")
    print(f"{len(corpus)} corpus models, {len(invalid)} invalid models; "
          f"{len(stricter)} invalid models only we reject: {', '.join(stricter)}")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
