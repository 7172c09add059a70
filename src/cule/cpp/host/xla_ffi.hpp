// The part of XLA's FFI C ABI that cule's jitted step uses, declared here so
// the extension builds without jax installed. The layouts follow XLA's
// xla/ffi/api/c_api.h (API version 0.x): every struct begins with its size
// and an extension pointer; enums are C ints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

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

enum AttrType : int { kScalarAttr = 3 };
struct ByteSpan {
  const char* ptr;
  size_t len;
};
struct Scalar {
  DataType dtype;
  void* value;
};

struct Attrs {  // attribute i: names[i], of types[i] (a scalar: attrs[i] is a Scalar*)
  size_t struct_size;
  ExtensionBase* extension_start;
  int64_t size;
  int* types;
  ByteSpan** names;
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

// XLA_FFI_Stream_Get: the platform stream (a CUstream on CUDA) of the call.
struct StreamGetArgs {
  size_t struct_size;
  ExtensionBase* extension_start;
  void* ctx;
  void* stream;  // out
};
using StreamGet = Error*(StreamGetArgs*);

struct Api {
  size_t struct_size;
  ExtensionBase* extension_start;
  ApiVersion api_version;
  const void* internal_api;
  ErrorCreate* error_create;  // the API's functions, in c_api.h's order, up to the last one cule calls
  void* error_get_message;
  void* error_destroy;
  void* handler_register;
  StreamGet* stream_get;
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

// XLA's first call of a handler asks for its API version and traits through
// the metadata extension: true when this call was that question, answered.
inline bool answer_metadata(CallFrame* frame) {
  for (ExtensionBase* e = frame->extension_start; e; e = e->next) {
    if (e->type != kMetadataExtension) continue;
    Metadata* m = reinterpret_cast<MetadataExtension*>(e)->metadata;
    m->api_version = ApiVersion{sizeof(ApiVersion), nullptr, kApiMajor, kApiMinor};
    m->traits = 0;
    return true;
  }
  return false;
}

inline Error* make_error(CallFrame* frame, ErrorCode code, const std::string& message) {
  ErrorCreateArgs args{sizeof(ErrorCreateArgs), nullptr, message.c_str(), code};
  return frame->api->error_create(&args);
}

// Objects named to XLA's calls by an int32 handle, filled from Python; a
// released handle stays empty (a call naming it fails with `what`).
template <typename T>
class Registry {
 public:
  explicit Registry(const char* what) : what_(what) {}

  int32_t add(std::shared_ptr<T> item) {
    std::lock_guard<std::mutex> lock(mutex_);
    items_.push_back(std::move(item));
    return (int32_t)items_.size() - 1;
  }

  std::shared_ptr<T> get(int32_t handle) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (handle < 0 || (size_t)handle >= items_.size() || !items_[handle])
      throw std::invalid_argument(std::string("cule: no ") + what_ + " is registered under handle " +
                                  std::to_string(handle) + " (was its env closed?)");
    return items_[handle];
  }

  void release(int32_t handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (handle >= 0 && (size_t)handle < items_.size()) items_[handle].reset();
  }

 private:
  const char* what_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<T>> items_;
};

}  // namespace cule::xla
