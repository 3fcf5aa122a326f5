# onnxir_add_library(NAME SOURCES src... DEPS dep...)
#   A library onnxir_NAME with alias onnxir::NAME, the public include
#   directory, our warning flags, and install/export registration. Static,
#   or shared with -DBUILD_SHARED_LIBS=ON (onnxir_set_shared_properties).
set(ONNXIR_WARNING_FLAGS -Wall -Wextra)

# A shared library of ours: libonnxir_X.so.<major>.<minor> (the SONAME: no
# ABI promise before 1.0) -> libonnxir_X.so.<version>, hidden visibility
# except what the public headers mark (Note [Exported API] in
# onnxir/Support/Export.h), and its static dependencies kept private. Not in
# sanitizer builds, where the sanitizer runtime must stay visible.
function(onnxir_set_shared_properties target)
  get_target_property(_type ${target} TYPE)
  if(NOT _type STREQUAL "SHARED_LIBRARY")
    return()
  endif()
  set_target_properties(${target} PROPERTIES
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(NOT ONNXIR_SANITIZE)
    target_link_options(${target} PRIVATE -Wl,--exclude-libs,ALL -Wl,--no-undefined)
  endif()
endfunction()

set_property(GLOBAL PROPERTY ONNXIR_EXPORTED_TARGETS "")

function(onnxir_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(onnxir_${name} ${ARG_SOURCES})
  add_library(onnxir::${name} ALIAS onnxir_${name})
  set_target_properties(onnxir_${name} PROPERTIES EXPORT_NAME ${name})
  onnxir_set_shared_properties(onnxir_${name})
  target_include_directories(onnxir_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  target_compile_options(onnxir_${name} PRIVATE ${ONNXIR_WARNING_FLAGS} ${ONNXIR_FUZZ_COVERAGE_FLAGS})
  target_link_libraries(onnxir_${name} PUBLIC ${ARG_DEPS})
  # The IR's headers (and the LLVM ADT under them) are parsed once per
  # library, not once per file: a third of a clean build's time.
  target_precompile_headers(onnxir_${name} PRIVATE [["onnxir/IR.h"]])
  set_property(GLOBAL APPEND PROPERTY ONNXIR_EXPORTED_TARGETS onnxir_${name})
endfunction()

# onnxir_add_tool(NAME SOURCES src... DEPS dep...)
function(onnxir_add_tool name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${ONNXIR_WARNING_FLAGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  install(TARGETS ${name} RUNTIME DESTINATION bin)
endfunction()
