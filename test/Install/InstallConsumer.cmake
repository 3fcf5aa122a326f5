# Script mode: install, build the consumer, run it. Any failure is fatal.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/RunStep.cmake)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
# Both tools are installed, and run from the prefix.
foreach(tool onnx-opt onnxir-text)
  if(NOT EXISTS ${WORK_DIR}/prefix/bin/${tool})
    message(FATAL_ERROR "${tool} is not installed in ${WORK_DIR}/prefix/bin")
  endif()
endforeach()
run(${WORK_DIR}/prefix/bin/onnxir-text print ${SOURCE_DIR}/examples/models/tiny_if.onnx)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
