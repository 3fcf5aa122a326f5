//===- Export.h - What a shared onnxir library exports --------------------===//
//
// Note [Exported API]
//   Built with -DBUILD_SHARED_LIBS=ON, the onnxir libraries are compiled with
//   hidden visibility: a symbol is exported only when a public header
//   (include/onnxir) declares it between ONNXIR_API_BEGIN and ONNXIR_API_END,
//   which every header puts around its `namespace onnxir` block. So the
//   public API is exported whole (classes with their vtables and typeinfo,
//   which dynamic_cast and exceptions across libraries need; free functions;
//   variables), while helpers that only a .cpp or a header under lib/
//   declares, and everything of LLVM, protobuf and absl that our code
//   instantiates, stay inside the library. Static dependencies are linked
//   with --exclude-libs,ALL for the same reason (test ctest shared-symbols
//   checks the result).
//
//   A pragma rather than a macro on each declaration: clang takes a free
//   function's visibility from the declaration's own attributes, not from an
//   attribute on the namespace it was declared in, so a namespace attribute
//   would export classes but leave functions hidden under clang; the pragma
//   marks each declaration, with both compilers. Includes go before
//   ONNXIR_API_BEGIN, so no other project's declarations get marked.
//   ONNXIR_API marks a single declaration outside such a block.
//
//   In a static build the marks change nothing.
//
//===----------------------------------------------------------------------===//
#ifndef ONNXIR_SUPPORT_EXPORT_H
#define ONNXIR_SUPPORT_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define ONNXIR_API __attribute__((visibility("default")))
#define ONNXIR_API_BEGIN _Pragma("GCC visibility push(default)")
#define ONNXIR_API_END _Pragma("GCC visibility pop")
#else
#define ONNXIR_API
#define ONNXIR_API_BEGIN
#define ONNXIR_API_END
#endif

#endif // ONNXIR_SUPPORT_EXPORT_H
