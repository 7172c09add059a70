// Python views of the core's structs, generated from the field lists the
// structs are declared from (X(type, name) X-macros next to them, see
// CULE_DECLARE_FIELD in common.hpp): a view can neither miss a member nor
// get its name or offset wrong.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>

namespace cule::bindings {

namespace py = pybind11;

// A member's value: numbers as ints, arrays as lists. Structs with a field
// list of their own get an overload that returns CULE_FIELDS_DICT of it;
// it must be declared before the views that use it.
template <class T>
py::object field_value(const T& v) {
  return py::cast(v);
}
template <class T, size_t N>
py::object field_value(const T (&a)[N]) {
  py::list values;
  for (const T& v : a) values.append(field_value(v));
  return values;
}

// {name: value} for each field of LIST in `object`.
#define CULE_FIELD_TO_DICT(type, name) fields[#name] = field_value(object_.name);
#define CULE_FIELDS_DICT(LIST, object) \
  [](const auto& object_) {            \
    py::dict fields;                   \
    LIST(CULE_FIELD_TO_DICT)           \
    return fields;                     \
  }(object)

// The numpy structured dtype of Struct with LIST's fields at their offsets
// and Struct's size, so arrays of Struct (padding and all) read as records.
#define CULE_FIELD_TO_DTYPE(type, name) \
  names.append(#name), formats.append(py::dtype::of<type>()), offsets.append(offsetof(Struct_, name));
#define CULE_FIELDS_DTYPE(Struct, LIST)                                      \
  [] {                                                                       \
    using Struct_ = Struct;                                                  \
    py::list names, formats, offsets;                                        \
    LIST(CULE_FIELD_TO_DTYPE)                                                \
    return py::dtype(names, formats, offsets, (py::ssize_t)sizeof(Struct_)); \
  }()

}  // namespace cule::bindings
