/* Instantiates a value-type template: the header named by HX_TEMPLATE,
 * written once for a type HX_REAL with its function names wrapped in
 * HX_FN(name) and its constants in HX_R(x), for double (plain names: the
 * FP64 kernels and the host setup) and for float (names with _f32: the FP32
 * kernels). HX_REAL_OTHER is the other of the two types (a conversion loop
 * into HX_REAL reads it). Under C++ (the CUDA kernels, templated on the
 * type) the float instantiation also exists under the plain names, as
 * overloads. No include guard: include it once per template, with
 * HX_TEMPLATE defined (undefined again afterwards). */
#define HX_R(x) ((HX_REAL)(x))
#define HX_REAL double
#define HX_REAL_OTHER float
#define HX_FN(name) name
#include HX_TEMPLATE
#undef HX_FN
#undef HX_REAL_OTHER
#undef HX_REAL
#define HX_REAL float
#define HX_REAL_OTHER double
#define HX_FN(name) name##_f32
#include HX_TEMPLATE
#undef HX_FN
#if defined(__cplusplus)
#define HX_FN(name) name
#include HX_TEMPLATE
#undef HX_FN
#endif
#undef HX_REAL_OTHER
#undef HX_REAL
#undef HX_R
#undef HX_TEMPLATE
