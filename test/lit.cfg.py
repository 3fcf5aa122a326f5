# lit configuration: text tests of passes, the serializer and onnx-opt,
# checked with FileCheck in the style of MLIR's test/Transforms.
import os
import lit.formats

config.name = "onnxir"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".onnxtxt", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.onnxir_obj_root, "test")
# Unit/ holds GoogleTest sources; corpus folders hold inputs, not tests.
config.excludes = ["Unit", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs", "corpus", "README.md"]

# onnxir-run's and onnxir-reduce's folders are added here, beside those
# lit.site.cfg.py names.
config.onnxir_tools_dirs = list(config.onnxir_tools_dirs) + [
    os.path.join(config.onnxir_obj_root, "tools", "onnxir-run"),
    os.path.join(config.onnxir_obj_root, "tools", "onnxir-reduce"),
    os.path.join(config.onnxir_obj_root, "tools", "onnxir-diff")]
path = [d for d in config.onnxir_tools_dirs if os.path.isdir(d)]
path.append(config.llvm_tools_dir)
path.append(config.environment.get("PATH", os.environ.get("PATH", "")))
config.environment["PATH"] = os.pathsep.join(path)
# onnxir-compose (issue 42 item 3) too, and the feature its tests require.
_compose = os.path.join(config.onnxir_obj_root, "tools", "onnxir-compose")
if os.path.exists(os.path.join(_compose, "onnxir-compose")):
    config.environment["PATH"] = _compose + os.pathsep + config.environment["PATH"]
    config.available_features.add("onnxir-compose")
# A replacement a pattern gets wrong (Note [Replacement type check]) fails
# the test that meets it.
config.environment["ONNXIR_PATTERN_BUGS"] = "error"
for var in ("HOME", "TMPDIR", "ORT_NODE_MODULES"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
if config.sanitized:
    config.environment["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
    config.environment["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    # ASan reserves terabytes of address space for its shadow, so
    # test/Hostile/bounded.sh bounds memory by ASan's own RSS limit there.
    config.environment["ONNXIR_SANITIZED"] = "1"

config.substitutions.append(("%shared", config.shared_dir))
config.substitutions.append(("%testdata", config.testdata_dir))
config.substitutions.append(("%python", config.system_python))
config.substitutions.append(("%srcroot", config.onnxir_src_root))

for d in config.onnxir_tools_dirs:
    for tool in ("onnx-opt", "onnxir-text", "onnxir-run", "onnxir-reduce", "onnxir-diff"):
        if os.path.exists(os.path.join(d, tool)):
            config.available_features.add(tool)
if config.sanitized:
    config.available_features.add("asan")
import shutil
if shutil.which("strace"):
    config.available_features.add("strace")
# Graphviz's `dot` renders the DOT views (test/Surgery/view-*); CI installs it
# (scripts/setup.sh --test).
if shutil.which("dot"):
    config.available_features.add("graphviz")
