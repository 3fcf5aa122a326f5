# Script mode (ctest install-backend-llvm-mismatch): installs this build into
# a scratch prefix and configures examples/backend against it on ANOTHER LLVM
# (OTHER_LLVM_DIR, a different major version). The configure must fail with
# onnxir's message naming both versions and how to rebuild; the test's
# PASS_REGULAR_EXPRESSION checks the message.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/RunStep.cmake)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/backend -B ${WORK_DIR}/build -G ${GENERATOR}
          -DLLVM_DIR=${OTHER_LLVM_DIR} -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "a backend on ${OTHER_LLVM_DIR} configured against onnxir built with ${LLVM_DIR}:\n${out}")
endif()
message(STATUS "configure failed as it should:\n${err}")
