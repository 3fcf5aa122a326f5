# onnxir_add_library(NAME SOURCES src... DEPS dep...)
#   A static library onnxir_NAME with alias onnxir::NAME, the public include
#   directory, our warning flags, and install/export registration.
set(ONNXIR_WARNING_FLAGS -Wall -Wextra)

set_property(GLOBAL PROPERTY ONNXIR_EXPORTED_TARGETS "")

function(onnxir_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(onnxir_${name} STATIC ${ARG_SOURCES})
  add_library(onnxir::${name} ALIAS onnxir_${name})
  set_target_properties(onnxir_${name} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(onnxir_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  target_compile_options(onnxir_${name} PRIVATE ${ONNXIR_WARNING_FLAGS})
  target_link_libraries(onnxir_${name} PUBLIC ${ARG_DEPS})
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
