# Finds the Debian packages onnxir is built from; each missing one is a clear
# error naming the package to install.

find_package(Protobuf QUIET)
if(NOT Protobuf_FOUND OR NOT Protobuf_PROTOC_EXECUTABLE)
  message(FATAL_ERROR "protobuf not found: apt-get install libprotobuf-dev protobuf-compiler")
endif()

find_package(absl CONFIG QUIET)
if(NOT absl_FOUND)
  message(FATAL_ERROR "abseil not found: apt-get install libabsl-dev")
endif()

# LLVM 14 Support: link the static libraries directly. The shared libLLVM
# would add hundreds of backend flags to onnx-opt --help.
find_path(ONNXIR_LLVM_INCLUDE_DIR llvm/ADT/StringRef.h
  HINTS /usr/lib/llvm-14/include ${LLVM_DIR}/../../../include)
find_library(ONNXIR_LLVM_SUPPORT_LIB NAMES libLLVMSupport.a LLVMSupport
  HINTS /usr/lib/llvm-14/lib)
find_library(ONNXIR_LLVM_DEMANGLE_LIB NAMES libLLVMDemangle.a LLVMDemangle
  HINTS /usr/lib/llvm-14/lib)
if(NOT ONNXIR_LLVM_INCLUDE_DIR OR NOT ONNXIR_LLVM_SUPPORT_LIB OR NOT ONNXIR_LLVM_DEMANGLE_LIB)
  message(FATAL_ERROR "LLVM 14 Support not found: apt-get install llvm-14-dev")
endif()
find_package(Threads REQUIRED)
find_package(ZLIB QUIET)
find_library(ONNXIR_TINFO_LIB NAMES tinfo ncurses)
add_library(onnxir_llvm_support INTERFACE)
target_include_directories(onnxir_llvm_support SYSTEM INTERFACE
  $<BUILD_INTERFACE:${ONNXIR_LLVM_INCLUDE_DIR}> $<INSTALL_INTERFACE:${ONNXIR_LLVM_INCLUDE_DIR}>)
set(_llvm_libs ${ONNXIR_LLVM_SUPPORT_LIB} ${ONNXIR_LLVM_DEMANGLE_LIB} Threads::Threads ${CMAKE_DL_LIBS})
if(ZLIB_FOUND)
  list(APPEND _llvm_libs ${ZLIB_LIBRARIES})
endif()
if(ONNXIR_TINFO_LIB)
  list(APPEND _llvm_libs ${ONNXIR_TINFO_LIB})
endif()
target_link_libraries(onnxir_llvm_support INTERFACE ${_llvm_libs})
add_library(onnxir::LLVMSupport ALIAS onnxir_llvm_support)
set_target_properties(onnxir_llvm_support PROPERTIES EXPORT_NAME LLVMSupport)
