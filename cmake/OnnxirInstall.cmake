# Install rules and the exported CMake package: find_package(onnxir) gives
# onnxir::IR, onnxir::Text, onnxir::Ops, onnxir::Serialize, onnxir::Passes and onnxir::Proto.
include(CMakePackageConfigHelpers)
get_property(_targets GLOBAL PROPERTY ONNXIR_EXPORTED_TARGETS)
install(TARGETS ${_targets} onnxir_llvm_support EXPORT onnxirTargets
        ARCHIVE DESTINATION lib LIBRARY DESTINATION lib)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/onnxir DESTINATION include)
install(EXPORT onnxirTargets NAMESPACE onnxir:: DESTINATION lib/cmake/onnxir)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/onnxirConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/onnxirConfig.cmake INSTALL_DESTINATION lib/cmake/onnxir)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/onnxirConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/onnxirConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/onnxirConfigVersion.cmake
        DESTINATION lib/cmake/onnxir)
# The build tree is a package too: find_package(onnxir) with
# onnxir_DIR=<build dir> links the libraries where they were built, without
# installing (test/Install: build-tree-consumer).
export(EXPORT onnxirTargets NAMESPACE onnxir::
       FILE ${CMAKE_CURRENT_BINARY_DIR}/onnxirTargets.cmake)
