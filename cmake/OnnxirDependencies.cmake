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

# LLVM Support, found as LLVM's own out-of-tree projects find it: LLVMConfig.cmake
# from -DLLVM_DIR=<prefix>/lib/cmake/llvm, Debian's LLVM 14 when none is given.
# Note [Which LLVM and how it is linked]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Any LLVM Debian ships (14, 15, 16, 19) builds onnxir; the sources use only the
# spellings all of them have (onnxir/Support/LLVMCompat.h holds the rest). The
# installed package records the version (onnxirConfig.cmake.in): a consumer on
# another LLVM major version is refused at configure time, since LLVM's ABI
# changes between them (a raw_ostream compiled against 14 crashes inside 19's).
# How Support is linked (ONNXIR_LINK_LLVM_DYLIB):
#  - static onnxir libraries (the default): LLVM's static component libraries,
#    as before: onnx-opt stays one self-contained program, and its --help
#    shows no backend flags of libLLVM's.
#  - shared onnxir libraries (-DBUILD_SHARED_LIBS=ON): as that LLVM asks, i.e.
#    libLLVM.so when it was built with LLVM_LINK_LLVM_DYLIB (Debian's are). The
#    onnxir libraries then share one Support with each other and with a
#    backend on libLLVM.so; a static Support would be copied into each of
#    them (--exclude-libs keeps each copy private, never exported).
if(NOT LLVM_DIR AND EXISTS /usr/lib/llvm-14/lib/cmake/llvm/LLVMConfig.cmake)
  set(LLVM_DIR /usr/lib/llvm-14/lib/cmake/llvm CACHE PATH "The LLVM onnxir is built with (<prefix>/lib/cmake/llvm)")
endif()
find_package(LLVM CONFIG QUIET)
if(NOT LLVM_FOUND)
  message(FATAL_ERROR "LLVM not found: apt-get install llvm-14-dev, or -DLLVM_DIR=<prefix>/lib/cmake/llvm for another LLVM")
endif()
if(LLVM_VERSION_MAJOR VERSION_LESS 14)
  message(FATAL_ERROR "onnxir needs LLVM 14 or newer; ${LLVM_DIR} is LLVM ${LLVM_PACKAGE_VERSION}")
endif()
if(BUILD_SHARED_LIBS AND LLVM_LINK_LLVM_DYLIB)
  set(_dylib_default ON)
else()
  set(_dylib_default OFF)
endif()
option(ONNXIR_LINK_LLVM_DYLIB "Link libLLVM.so instead of LLVM's static Support (Note [Which LLVM and how it is linked])" ${_dylib_default})
if(ONNXIR_LINK_LLVM_DYLIB)
  if(NOT TARGET LLVM)
    message(FATAL_ERROR "ONNXIR_LINK_LLVM_DYLIB=ON, but ${LLVM_DIR} has no libLLVM.so")
  endif()
  set(_llvm_libs LLVM)
else()
  llvm_map_components_to_libnames(_llvm_libs support)
endif()
message(STATUS "LLVM ${LLVM_PACKAGE_VERSION} (${LLVM_DIR}): ${_llvm_libs}")
set(ONNXIR_LLVM_INCLUDE_DIR ${LLVM_INCLUDE_DIRS})
add_library(onnxir_llvm_support INTERFACE)
target_include_directories(onnxir_llvm_support SYSTEM INTERFACE
  $<BUILD_INTERFACE:${ONNXIR_LLVM_INCLUDE_DIR}> $<INSTALL_INTERFACE:${ONNXIR_LLVM_INCLUDE_DIR}>)
find_package(Threads REQUIRED)
target_link_libraries(onnxir_llvm_support INTERFACE ${_llvm_libs} Threads::Threads)
add_library(onnxir::LLVMSupport ALIAS onnxir_llvm_support)
set_target_properties(onnxir_llvm_support PROPERTIES EXPORT_NAME LLVMSupport)

# The kernels' libraries: RE2 for RegexFullMatch (Note [RegexFullMatch is
# RE2]), libjpeg(-turbo) and libpng for ImageDecoder (Note [ImageDecoder]),
# both in lib/Ops/Misc.cpp. Private to onnxir::Ops; a static build's package
# finds them again for its consumers (onnxirConfig.cmake.in).
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(RE2 QUIET IMPORTED_TARGET re2)
endif()
if(NOT RE2_FOUND)
  message(FATAL_ERROR "re2 not found: apt-get install libre2-dev pkg-config")
endif()
find_package(JPEG QUIET)
if(NOT JPEG_FOUND)
  message(FATAL_ERROR "libjpeg not found: apt-get install libjpeg-dev")
endif()
find_package(PNG QUIET)
if(NOT PNG_FOUND)
  message(FATAL_ERROR "libpng not found: apt-get install libpng-dev")
endif()
