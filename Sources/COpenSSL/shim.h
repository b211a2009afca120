// Shim for OpenSSL 3.0 (Debian 12 libssl-dev). Only the CryptoCore target imports this module.
// Each helper states why it exists: Swift cannot import function-like macros, compound integer
// macros, or give imported string macros a static lifetime.
#ifndef MDOC_COPENSSL_SHIM_H
#define MDOC_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/err.h>
#include <openssl/obj_mac.h>
#include <openssl/objects.h>
#include <string.h>
#include <time.h>

// Compound macros (EVP_PKEY_KEYPAIR is an OR of other macros): not imported.
static const int mdoc_EVP_PKEY_KEYPAIR = EVP_PKEY_KEYPAIR;
static const int mdoc_EVP_PKEY_PUBLIC_KEY = EVP_PKEY_PUBLIC_KEY;

// OSSL_PARAM keys are stored by reference until the params are consumed: they need static lifetime,
// which a Swift String bridged to a C string does not have.
static const char *const mdoc_PARAM_GROUP_NAME = OSSL_PKEY_PARAM_GROUP_NAME;
static const char *const mdoc_PARAM_PUB_KEY = OSSL_PKEY_PARAM_PUB_KEY;
static const char *const mdoc_PARAM_PRIV_KEY = OSSL_PKEY_PARAM_PRIV_KEY;
static const char *const mdoc_PARAM_ENCODED_PUBLIC_KEY = OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY;
static const char *const mdoc_PARAM_EC_PUB_X = OSSL_PKEY_PARAM_EC_PUB_X;
static const char *const mdoc_PARAM_EC_PUB_Y = OSSL_PKEY_PARAM_EC_PUB_Y;

// Group names handed to OSSL_PARAM_BLD, which keeps the pointer until OSSL_PARAM_BLD_to_param.
static const char *const mdoc_GROUP_P256 = "P-256";
static const char *const mdoc_GROUP_P384 = "P-384";
static const char *const mdoc_GROUP_P521 = "P-521";

// Compound flag macro: not imported.
static const unsigned long mdoc_XN_FLAG_RFC2253 = XN_FLAG_RFC2253;

// Function-like macros: not imported.
static inline void mdoc_OPENSSL_free(void *p) { OPENSSL_free(p); }
static inline STACK_OF(X509) *mdoc_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int mdoc_sk_X509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }
static inline void mdoc_sk_X509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }
static inline int mdoc_sk_ASN1_OBJECT_num(const STACK_OF(ASN1_OBJECT) *sk) { return sk_ASN1_OBJECT_num(sk); }
static inline const ASN1_OBJECT *mdoc_sk_ASN1_OBJECT_value(const STACK_OF(ASN1_OBJECT) *sk, int i) { return sk_ASN1_OBJECT_value(sk, i); }
static inline void mdoc_EXTENDED_KEY_USAGE_free(EXTENDED_KEY_USAGE *e) { sk_ASN1_OBJECT_pop_free(e, ASN1_OBJECT_free); }
/* subjectAltName: the decoded GENERAL_NAMES (NULL when absent, malformed or present twice), its
   count, the i-th entry's dNSName (NULL when that entry is another kind), and its release. */
static inline GENERAL_NAMES *mdoc_x509_san(const X509 *x) { return X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL); }
static inline int mdoc_sk_GENERAL_NAME_num(const GENERAL_NAMES *g) { return sk_GENERAL_NAME_num(g); }
static inline const ASN1_IA5STRING *mdoc_general_name_dns(const GENERAL_NAMES *g, int i) {
    const GENERAL_NAME *n = sk_GENERAL_NAME_value(g, i);
    return n && n->type == GEN_DNS ? n->d.dNSName : NULL;
}
static inline void mdoc_GENERAL_NAMES_free(GENERAL_NAMES *g) { GENERAL_NAMES_free(g); }

// ASN1_TIME -> seconds since 1970 (UTC) without relying on the deprecated or locale-dependent paths.
static inline int mdoc_asn1_time_to_unix(const ASN1_TIME *t, long long *out) {
    struct tm tmv;
    memset(&tmv, 0, sizeof tmv);
    if (t == NULL || ASN1_TIME_to_tm(t, &tmv) != 1) return 0;
    *out = (long long)timegm(&tmv);
    return 1;
}

// Adds one X.509v3 extension given in OpenSSL's config syntax (e.g. "critical,CA:TRUE"). A shim
// because X509V3_CTX lives on the stack and X509V3_set_ctx_nodb is a macro.
static inline int mdoc_x509_add_ext(X509 *cert, X509 *issuer, int nid, const char *value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer != NULL ? issuer : cert, cert, NULL, NULL, 0);
    X509_EXTENSION *ex = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (ex == NULL) return 0;
    int ok = X509_add_ext(cert, ex, -1);
    X509_EXTENSION_free(ex);
    return ok;
}

// RFC 5280 §6.1 takes the trust anchor as an input (its name and key), not as a certificate held to
// the profile: under X509_V_FLAG_X509_STRICT OpenSSL 3.0 also applies its CA-profile checks to the
// anchor itself (a keyUsage extension, key identifiers). This callback forgives exactly those at the
// anchor (the last certificate of the built chain); every check on intermediates and the leaf stays.
static int mdoc_anchor_as_input_cb(int ok, X509_STORE_CTX *ctx) {
    if (ok) return 1;
    int err = X509_STORE_CTX_get_error(ctx);
    STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(ctx);
    if (chain == NULL || X509_STORE_CTX_get_error_depth(ctx) != sk_X509_num(chain) - 1) return 0;
    return err == X509_V_ERR_CA_CERT_MISSING_KEY_USAGE || err == X509_V_ERR_MISSING_SUBJECT_KEY_IDENTIFIER
        || err == X509_V_ERR_MISSING_AUTHORITY_KEY_IDENTIFIER;
}
static inline void mdoc_x509_anchor_as_input(X509_STORE_CTX *ctx) {
    X509_STORE_CTX_set_verify_cb(ctx, mdoc_anchor_as_input_cb);
}

#endif
