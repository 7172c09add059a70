// The part of XLA's FFI C ABI that cule's jitted step uses, declared here so
// the extension builds without jax installed. The layouts follow XLA's
// xla/ffi/api/c_api.h (API version 0.x): every struct begins with its size
// and an extension pointer; enums are C ints.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cule::xla {

enum ExtensionType : int { kMetadataExtension = 1 };
enum Stage : int { kInstantiate = 0, kPrepare = 1, kInitialize = 2, kExecute = 3 };
enum DataType : int { kPred = 1, kS32 = 4, kU8 = 6 };  // XLA_FFI_DataType values cule's buffers use
enum ErrorCode : int { kInvalidArgument = 3, kInternal = 13 };

struct ExtensionBase {
  size_t struct_size;
  ExtensionType type;
  ExtensionBase* next;
};

struct ApiVersion {
  size_t struct_size;
  ExtensionBase* extension_start;
  int major_version;
  int minor_version;
};

// XLA asks a handler which API it was built for through this extension.
struct Metadata {
  size_t struct_size;
  ApiVersion api_version;
  uint32_t traits;
};
struct MetadataExtension {
  ExtensionBase base;
  Metadata* metadata;
};

struct Buffer {
  size_t struct_size;
  ExtensionBase* extension_start;
  DataType dtype;
  void* data;
  int64_t rank;
  int64_t* dims;
};

struct List {  // XLA_FFI_Args and XLA_FFI_Rets: `size` buffers
  size_t struct_size;
  ExtensionBase* extension_start;
  int64_t size;
  int* types;
  void** items;
};

struct Attrs {
  size_t struct_size;
  ExtensionBase* extension_start;
  int64_t size;
  int* types;
  void** names;
  void** attrs;
};

struct Error;
struct ErrorCreateArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  const char* message;
  ErrorCode errc;
};
using ErrorCreate = Error*(ErrorCreateArgs*);

struct Api {
  size_t struct_size;
  ExtensionBase* extension_start;
  ApiVersion api_version;
  const void* internal_api;
  ErrorCreate* error_create;  // the first of the API's functions
};

struct CallFrame {
  size_t struct_size;
  ExtensionBase* extension_start;
  const Api* api;
  void* ctx;
  Stage stage;
  List args;
  List rets;
  Attrs attrs;
  void* future;
};

using Handler = Error*(CallFrame*);

// The API version a handler declares: XLA accepts a handler whose major
// version equals its own and whose minor version is not newer.
constexpr int kApiMajor = 0;
constexpr int kApiMinor = 1;

}  // namespace cule::xla
