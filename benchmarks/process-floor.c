/*
 * The process floor of `mdoc-respond respond`: a C program that makes the OpenSSL 3.0 calls one
 * Annex C answer needs, each once, in a fresh process, with nothing else (no request parsing, no CBOR,
 * no context, no output). What `mdoc-respond respond` costs beyond this process is the CLI's own: its
 * start-up, reading the context and the request, planning and building the answer. Benchmark tooling,
 * not product code (the product reaches OpenSSL only through CryptoCore): `scripts/process-floor.sh`
 * builds it with cc (a SwiftPM target would link the Swift runtime into it) and counts its
 * instructions beside the CLI's; `mdoc-bench` times it beside the CLI (`cli.respond.process_floor`).
 *
 *   mdoc-process-floor <TestVectors directory> signed|unsigned
 *
 * Per run, as CryptoCore does them:
 *   - SHA-256 and AES-128-GCM fetched once (EVP_MD_fetch, EVP_CIPHER_fetch);
 *   - signed only: the reader certificate and its trust anchor parsed (d2i_X509), the certificate's
 *     signature verified with the anchor's key (X509_verify), and one more ECDSA P-256 verification
 *     of a digest (EVP_PKEY_verify) for the request's readerAuth signature;
 *   - the recipient's public key imported from its uncompressed point (EC_POINT_oct2point,
 *     EC_POINT_is_on_curve, EVP_PKEY_fromdata);
 *   - the device key read from its PKCS#8 file and imported from its scalar and point
 *     (EVP_PKEY_fromdata; the engine also checks d·G against the file's point, ~0.1M instructions,
 *     which this floor does not);
 *   - SHA-256 of an 11 KB credential (the record check of a holder's first request);
 *   - HPKE's DHKEM(P-256) and key schedule: an ephemeral key generated, ECDH, ten HMAC-SHA256 from
 *     digests; AES-128-GCM over an 11.5 KB DeviceResponse;
 *   - the device signature: SHA-256 of DeviceAuthentication and one ECDSA P-256 signature.
 * Exit status 0 when every call succeeded.
 */
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "mdoc-process-floor: %s failed (line %d)\n", #x, __LINE__); return 1; } } while (0)

static long readFile(const char *dir, const char *name, unsigned char *buf, long cap) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    long n = (long)fread(buf, 1, (size_t)cap, f);
    fclose(f);
    return n;
}

static EVP_MD *sha256;

static int digest(const unsigned char *m, size_t n, unsigned char out[32]) {
    unsigned int len = 0;
    return EVP_Digest(m, n, out, &len, sha256, NULL) == 1 && len == 32;
}

/* HMAC-SHA256 from two digests, as CryptoCore computes it (no MAC fetch). */
static int hmac(const unsigned char key[32], const unsigned char *m, size_t n, unsigned char out[32]) {
    unsigned char pad[64], inner[32];
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int ok = c != NULL;
    memset(pad, 0x36, 64);
    for (int i = 0; i < 32; i++) pad[i] ^= key[i];
    ok = ok && EVP_DigestInit_ex2(c, sha256, NULL) && EVP_DigestUpdate(c, pad, 64) && EVP_DigestUpdate(c, m, n)
        && EVP_DigestFinal_ex(c, inner, NULL);
    for (int i = 0; i < 64; i++) pad[i] ^= 0x36 ^ 0x5c;
    ok = ok && EVP_DigestInit_ex2(c, sha256, NULL) && EVP_DigestUpdate(c, pad, 64) && EVP_DigestUpdate(c, inner, 32)
        && EVP_DigestFinal_ex(c, out, NULL);
    EVP_MD_CTX_free(c);
    return ok;
}

static EVP_PKEY *fromdata(const unsigned char *pub, size_t publen, BIGNUM *priv) {
    OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
    EVP_PKEY *k = NULL;
    if (b && OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME, "P-256", 0)
        && (!priv || OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_PRIV_KEY, priv))
        && OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, pub, publen)) {
        OSSL_PARAM *p = OSSL_PARAM_BLD_to_param(b);
        EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
        if (p && c && EVP_PKEY_fromdata_init(c) == 1)
            EVP_PKEY_fromdata(c, &k, priv ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, p);
        EVP_PKEY_CTX_free(c);
        OSSL_PARAM_free(p);
    }
    OSSL_PARAM_BLD_free(b);
    return k;
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[2], "signed") && strcmp(argv[2], "unsigned"))) {
        fprintf(stderr, "usage: mdoc-process-floor <TestVectors directory> signed|unsigned\n");
        return 2;
    }
    const char *dir = argv[1];
    static unsigned char buf[65536], large[11776], out[11776 + 16], h[32];
    memset(large, 0xa5, sizeof large);
    CHECK((sha256 = EVP_MD_fetch(NULL, "SHA256", NULL)) != NULL);
    EVP_CIPHER *gcm = EVP_CIPHER_fetch(NULL, "AES-128-GCM", NULL);
    CHECK(gcm != NULL);
    EC_GROUP *group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    CHECK(group != NULL);

    /* The reader's certificate chain and its readerAuth signature. */
    unsigned char recipient[65];
    long n;
    if (strcmp(argv[2], "signed") == 0) {
        CHECK((n = readFile(dir, "pki/reader-root.der", buf, sizeof buf)) > 0);
        const unsigned char *p = buf;
        X509 *root = d2i_X509(NULL, &p, n);
        CHECK(root != NULL);
        CHECK((n = readFile(dir, "pki/reader.der", buf, sizeof buf)) > 0);
        p = buf;
        X509 *reader = d2i_X509(NULL, &p, n);
        CHECK(reader != NULL);
        CHECK(X509_verify(reader, X509_get0_pubkey(root)) == 1);
        /* readerAuth: a digest and an ECDSA verification (the anchor's own signature stands in for it:
           same curve, same cost). */
        unsigned char *tbs = NULL;
        int tbsLen = i2d_re_X509_tbs(root, &tbs);
        CHECK(tbsLen > 0 && digest(tbs, (size_t)tbsLen, h));
        OPENSSL_free(tbs);
        const ASN1_BIT_STRING *sig = NULL;
        X509_get0_signature(&sig, NULL, root);
        EVP_PKEY_CTX *v = EVP_PKEY_CTX_new(X509_get0_pubkey(root), NULL);
        CHECK(v != NULL && EVP_PKEY_verify_init(v) == 1);
        CHECK(EVP_PKEY_verify(v, ASN1_STRING_get0_data(sig), (size_t)ASN1_STRING_length(sig), h, 32) == 1);
        EVP_PKEY_CTX_free(v);
        size_t len = 0;
        CHECK(EVP_PKEY_get_octet_string_param(X509_get0_pubkey(reader), OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, recipient,
                  sizeof recipient, &len) == 1 && len == 65);
        X509_free(reader);
        X509_free(root);
    } else {
        /* Any valid point: the generator's encoding. */
        CHECK(EC_POINT_point2oct(group, EC_GROUP_get0_generator(group), POINT_CONVERSION_UNCOMPRESSED, recipient,
                  sizeof recipient, NULL) == 65);
    }

    /* The recipient's public key, validated and imported. */
    EC_POINT *q = EC_POINT_new(group);
    CHECK(q != NULL && EC_POINT_oct2point(group, q, recipient, 65, NULL) == 1);
    CHECK(EC_POINT_is_at_infinity(group, q) == 0 && EC_POINT_is_on_curve(group, q, NULL) == 1);
    EC_POINT_free(q);
    EVP_PKEY *peer = fromdata(recipient, 65, NULL);
    CHECK(peer != NULL);

    /* The device key: PEM → PKCS#8 DER (P-256 with its public key: scalar at 36, point at 73). */
    CHECK((n = readFile(dir, "context/keys/mdl.pem", buf, sizeof buf - 1)) > 0);
    buf[n] = 0;
    char *b64 = strstr((char *)buf, "-----\n");
    char *end = strstr((char *)buf, "\n-----END");
    CHECK(b64 != NULL && end != NULL);
    b64 += 6;
    unsigned char joined[512], der[512];
    int jn = 0;
    for (char *c = b64; c < end && jn < (int)sizeof joined; c++)
        if (*c != '\n') joined[jn++] = (unsigned char)*c;
    int dn = EVP_DecodeBlock(der, joined, jn);
    CHECK(dn >= 138 && der[34] == 0x04 && der[35] == 0x20 && der[73] == 0x04);
    BIGNUM *d = BN_secure_new();
    CHECK(d != NULL && BN_bin2bn(der + 36, 32, d) != NULL);
    EVP_PKEY *device = fromdata(der + 73, 65, d);
    BN_clear_free(d);
    OPENSSL_cleanse(der, sizeof der);
    OPENSSL_cleanse(joined, sizeof joined);
    CHECK(device != NULL);

    /* The credential's record check. */
    CHECK(digest(large, sizeof large, h));

    /* HPKE: DHKEM(P-256, HKDF-SHA256), key schedule, AES-128-GCM. */
    EVP_PKEY_CTX *g = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    EVP_PKEY *eph = NULL;
    CHECK(g != NULL && EVP_PKEY_keygen_init(g) == 1 && EVP_PKEY_CTX_set_group_name(g, "P-256") == 1);
    CHECK(EVP_PKEY_keygen(g, &eph) == 1);
    EVP_PKEY_CTX_free(g);
    unsigned char enc[65], dh[32];
    size_t len = 0;
    CHECK(EVP_PKEY_get_octet_string_param(eph, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, enc, sizeof enc, &len) == 1);
    EVP_PKEY_CTX *x = EVP_PKEY_CTX_new(eph, NULL);
    len = sizeof dh;
    CHECK(x != NULL && EVP_PKEY_derive_init(x) == 1 && EVP_PKEY_derive_set_peer_ex(x, peer, 0) == 1);
    CHECK(EVP_PKEY_derive(x, dh, &len) == 1 && len == 32);
    EVP_PKEY_CTX_free(x);
    unsigned char k[32];
    memcpy(k, dh, 32);
    for (int i = 0; i < 10; i++) CHECK(hmac(k, enc, sizeof enc, k));
    EVP_CIPHER_CTX *a = EVP_CIPHER_CTX_new();
    int outl = 0, fin = 0;
    CHECK(a != NULL && EVP_EncryptInit_ex2(a, gcm, k, k + 16, NULL) == 1);
    CHECK(EVP_EncryptUpdate(a, out, &outl, large, (int)sizeof large) == 1);
    CHECK(EVP_EncryptFinal_ex(a, out + outl, &fin) == 1);
    CHECK(EVP_CIPHER_CTX_ctrl(a, EVP_CTRL_GCM_GET_TAG, 16, out + sizeof large) == 1);
    EVP_CIPHER_CTX_free(a);

    /* The device signature. */
    CHECK(digest(large, 320, h));
    EVP_PKEY_CTX *s = EVP_PKEY_CTX_new(device, NULL);
    unsigned char sig[80];
    len = sizeof sig;
    CHECK(s != NULL && EVP_PKEY_sign_init(s) == 1 && EVP_PKEY_sign(s, sig, &len, h, 32) == 1);
    EVP_PKEY_CTX_free(s);

    EVP_PKEY_free(eph);
    EVP_PKEY_free(device);
    EVP_PKEY_free(peer);
    EC_GROUP_free(group);
    EVP_CIPHER_free(gcm);
    EVP_MD_free(sha256);
    return 0;
}
