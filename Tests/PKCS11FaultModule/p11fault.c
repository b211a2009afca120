// A fault-injecting PKCS#11 module for the PKCS#11 tests. It loads the real module (SoftHSM2, or the
// one named by MDOC_P11FAULT_TARGET), passes every call through, and changes one behaviour selected
// by its own file name: a copy named `...fault-<mode>.so` runs <mode>:
//
//   pin-locked        C_Login answers CKR_PIN_LOCKED
//   sign-error        C_Sign answers CKR_DEVICE_ERROR
//   sign-removed      C_Sign answers CKR_DEVICE_REMOVED
//   sign-error-after-1  the first C_Sign works (the key check), every later one answers CKR_DEVICE_ERROR
//   sign-stale-once   the second C_Sign answers CKR_SESSION_HANDLE_INVALID once, then calls work again
//   sign-short        C_Sign reports one byte fewer than the token wrote
//   cant-lock         C_Initialize with CKF_OS_LOCKING_OK answers CKR_CANT_LOCK (single-threaded)
//   version-9         the function list claims Cryptoki 9.0
//   pass              nothing changed
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <p11-kit-1/p11-kit/pkcs11.h>
#include "p11fault.h"

static CK_FUNCTION_LIST real_list_copy;
static CK_FUNCTION_LIST_PTR real;
static CK_FUNCTION_LIST ours;
static char mode[64];
static atomic_int sign_calls;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static CK_RV load_rv = CKR_OK;

const char *mdoc_p11fault_modes(void) {
    return "pin-locked sign-error sign-removed sign-error-after-1 sign-stale-once sign-short cant-lock version-9 pass";
}

static CK_RV f_Initialize(void *args) {
    if (strcmp(mode, "cant-lock") == 0 && args != NULL) {
        CK_C_INITIALIZE_ARGS *a = args;
        if (a->flags & CKF_OS_LOCKING_OK) return CKR_CANT_LOCK;
    }
    return real->C_Initialize(args);
}

static CK_RV f_Login(CK_SESSION_HANDLE s, CK_USER_TYPE u, CK_UTF8CHAR_PTR pin, CK_ULONG len) {
    if (strcmp(mode, "pin-locked") == 0) return CKR_PIN_LOCKED;
    return real->C_Login(s, u, pin, len);
}

static CK_RV f_Sign(CK_SESSION_HANDLE s, CK_BYTE_PTR data, CK_ULONG len, CK_BYTE_PTR sig, CK_ULONG_PTR siglen) {
    int n = atomic_fetch_add(&sign_calls, 1) + 1;
    if (strcmp(mode, "sign-error") == 0) return CKR_DEVICE_ERROR;
    if (strcmp(mode, "sign-removed") == 0) return CKR_DEVICE_REMOVED;
    /* What a module enforcing PKCS#11's fork rule answers a child that did not initialise it. */
    if (strcmp(mode, "sign-not-initialized-after-1") == 0 && n > 1) return CKR_CRYPTOKI_NOT_INITIALIZED;
    if (strcmp(mode, "sign-error-after-1") == 0 && n > 1) return CKR_DEVICE_ERROR;
    if (strcmp(mode, "sign-stale-once") == 0 && n == 2) return CKR_SESSION_HANDLE_INVALID;
    CK_RV rv = real->C_Sign(s, data, len, sig, siglen);
    if (rv == CKR_OK && sig != NULL && strcmp(mode, "sign-short") == 0 && *siglen > 0) *siglen -= 1;
    return rv;
}

static void load(void) {
    Dl_info info;
    if (dladdr((void *)&load, &info) == 0 || info.dli_fname == NULL) { load_rv = CKR_GENERAL_ERROR; return; }
    /* Loaded through a descriptor (/proc/self/fd/N while the loader still holds it open): the file's
       own name is where that link points. */
    char resolved[4096];
    const char *name = info.dli_fname;
    if (strstr(name, "fault-") == NULL && realpath(info.dli_fname, resolved) != NULL) name = resolved;
    const char *m = strstr(name, "fault-");
    if (m == NULL) { load_rv = CKR_GENERAL_ERROR; return; }
    m += 6;
    size_t n = strcspn(m, ".");
    if (n >= sizeof mode) n = sizeof mode - 1;
    memcpy(mode, m, n);
    mode[n] = 0;
    const char *target = getenv("MDOC_P11FAULT_TARGET");
    void *h = dlopen(target ? target : "/usr/lib/softhsm/libsofthsm2.so", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) { load_rv = CKR_GENERAL_ERROR; return; }
    CK_C_GetFunctionList get = (CK_C_GetFunctionList)dlsym(h, "C_GetFunctionList");
    if (get == NULL || get(&real) != CKR_OK) { load_rv = CKR_GENERAL_ERROR; return; }
    real_list_copy = *real;
    ours = real_list_copy;
    ours.C_Initialize = f_Initialize;
    ours.C_Login = f_Login;
    ours.C_Sign = f_Sign;
    if (strcmp(mode, "version-9") == 0) ours.version.major = 9;
}

CK_RV C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR list) {
    pthread_once(&once, load);
    if (load_rv != CKR_OK) return load_rv;
    *list = &ours;
    return CKR_OK;
}
