# Script mode (ctest install-backend): installs this build into a scratch
# prefix, then configures examples/backend against it on the LLVM onnxir was
# built with (LLVM_DIR), builds it, and runs it over every model in MODELS_DIR
# (-O2, then one LLVM function per node). Any failure is fatal; no models is
# a skip (exit 77), or a failure under CI=true.
file(GLOB models ${MODELS_DIR}/*.onnx)
if(NOT models)
  if("$ENV{CI}" STREQUAL "true")
    message(FATAL_ERROR "no models in ${MODELS_DIR}")
  endif()
  message("SKIP: no models in ${MODELS_DIR}")
  cmake_language(EXIT 77)
endif()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/RunStep.cmake)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
# The compiler of this build; a sanitizer build's libraries need the
# sanitizer runtime linked into the program.
set(flags -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
if(SANITIZE)
  list(APPEND flags -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined)
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/backend -B ${WORK_DIR}/build -G ${GENERATOR}
    -DLLVM_DIR=${LLVM_DIR} -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release
    ${flags})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/onnxir-example-backend ${models})
