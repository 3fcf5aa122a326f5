# Script mode: configure, build and run examples/consumer against the build
# tree's package (onnxir_DIR = the build directory), nothing installed. Any
# failure is fatal.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/RunStep.cmake)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${WORK_DIR}/build -G ${GENERATOR}
    -Donnxir_DIR=${BUILD_DIR})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
