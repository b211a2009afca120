// Shim for the PKCS#11 (Cryptoki 2.40) API, from Debian's libp11-kit-dev header. Only the PKCS11
// target imports this module. Nothing is linked: a module is loaded at run time with dlopen.
#ifndef MDOC_CPKCS11_SHIM_H
#define MDOC_CPKCS11_SHIM_H
#include <p11-kit-1/p11-kit/pkcs11.h>

// The entry point found with dlsym is a `void *`; calling it through its typedef is a C cast Swift
// can only spell with unsafeBitCast.
static inline CK_RV mdoc_p11_get_function_list(void *entry, CK_FUNCTION_LIST_PTR *list) {
    return ((CK_C_GetFunctionList)entry)(list);
}
#endif
