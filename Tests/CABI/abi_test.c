/*
 * Drives libmdocrespond through its C header: accept, two-phase with narrower approvals, every error
 * class, handle misuse, and two threads sharing one engine. Built and run by scripts/test.sh with the
 * system compiler under AddressSanitizer and UndefinedBehaviorSanitizer (and, in the full run, against
 * a library itself built with AddressSanitizer).
 *
 * usage: abi_test CONTEXT_DIR SNAPSHOT_FILE KEY_DIR REQUEST_FILE SIGNED_REQUEST_FILE ORIGIN CLOCK
 *   CONTEXT_DIR   a private (0700/0600) copy of TestVectors/context
 *   SNAPSHOT_FILE its context.cbor; KEY_DIR the directory its key references are relative to
 *   REQUEST_FILE  an unsigned Annex C request for the mDL (family_name, given_name, ...) from ORIGIN
 *   SIGNED_REQUEST_FILE  a request with readerAuth from ORIGIN
 *   CLOCK         an RFC 3339 time inside the credentials' validity
 * Prints one line per failed check and "abi: N passed, M failed"; exits 1 on any failure.
 */
#include "mdoc_respond.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int passed, failed;

#define CHECK(cond, ...)                                  \
    do {                                                  \
        if (cond) {                                       \
            passed++;                                     \
        } else {                                          \
            failed++;                                     \
            fprintf(stderr, "FAIL line %d: ", __LINE__);  \
            fprintf(stderr, __VA_ARGS__);                 \
            fprintf(stderr, "\n");                        \
        }                                                 \
    } while (0)

/* A status and its name, for messages. */
#define EXPECT_STATUS(got, want, what) \
    CHECK((got) == (want), "%s: got %s (%d), want %s", what, mdoc_status_name(got), (int)(got), mdoc_status_name(want))

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) { perror(path); exit(2); }
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

static const char *origin;
static uint8_t *request;
static size_t request_len;
static char config[256];

/* One accept that must succeed; returns the response length (0 on failure). */
static size_t accept_ok(mdoc_engine *engine, const char *what) {
    uint8_t *out = NULL;
    size_t out_len = 0;
    mdoc_error err;
    int32_t rc = mdoc_accept(engine, request, request_len, origin, &out, &out_len, &err);
    EXPECT_STATUS(rc, MDOC_OK, what);
    CHECK(err.code == MDOC_OK && err.detail[0] == 0, "%s: error struct cleared on success", what);
    CHECK(rc != MDOC_OK || (out != NULL && out_len > 100 && (out[0] == '{' || out[0] == 0x82)), "%s: a framed response (JSON, or the bare EncryptedResponse array)", what);
    mdoc_free(out);
    return rc == MDOC_OK ? out_len : 0;
}

/* An observer that counts events and keeps the last one's JSON. */
struct observed { int events; char last[512]; };
static void observe(void *context, const char *event_json) {
    struct observed *o = context;
    o->events += 1;
    snprintf(o->last, sizeof o->last, "%s", event_json ? event_json : "");
}

/* A refusal: the code, a non-empty detail that does not echo the origin, and no output. `rule` is the
 * engine rule the detail must begin with ("domain.rule: "), or NULL for the ABI's own refusals (whose
 * detail carries no rule). */
static void expect_accept_refused(mdoc_engine *engine, const uint8_t *req, size_t len, const char *org, int32_t want,
                                  const char *rule, const char *what) {
    uint8_t *out = (uint8_t *)0x1;
    size_t out_len = 99;
    mdoc_error err;
    memset(&err, 0x7f, sizeof err);
    int32_t rc = mdoc_accept(engine, req, len, org, &out, &out_len, &err);
    EXPECT_STATUS(rc, want, what);
    CHECK(err.code == rc, "%s: error.code matches the status", what);
    CHECK(memchr(err.detail, 0, sizeof err.detail) != NULL && err.detail[0] != 0, "%s: a NUL-terminated detail", what);
    CHECK(org == NULL || strlen(org) < 8 || strstr(err.detail, org) == NULL, "%s: the detail does not echo the origin", what);
    CHECK(out == NULL && out_len == 0, "%s: no partial output", what);
    if (rule != NULL) {
        size_t n = strlen(rule);
        CHECK(strncmp(err.detail, rule, n) == 0 && err.detail[n] == ':' && err.detail[n + 1] == ' ',
              "%s: refused by rule %s (detail: %s)", what, rule, err.detail);
    } else {
        CHECK(strchr(err.detail, ':') == NULL || strchr(err.detail, '.') == NULL ||
                  strchr(err.detail, '.') > strchr(err.detail, ':'),
              "%s: an ABI refusal names no engine rule (detail: %s)", what, err.detail);
    }
}

static void *worker(void *arg) {
    mdoc_engine *engine = arg;
    long ok = 0;
    for (int i = 0; i < 200; i++) {
        uint8_t *out = NULL;
        size_t out_len = 0;
        if (mdoc_accept(engine, request, request_len, origin, &out, &out_len, NULL) == MDOC_OK && out_len > 100) ok++;
        mdoc_free(out);
    }
    return (void *)ok;
}

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: abi_test CONTEXT_DIR SNAPSHOT_FILE KEY_DIR REQUEST_FILE SIGNED_REQUEST_FILE ORIGIN CLOCK\n");
        return 2;
    }
    const char *context_dir = argv[1], *key_dir = argv[3], *clock = argv[7];
    size_t snapshot_len, signed_len;
    uint8_t *snapshot = read_file(argv[2], &snapshot_len);
    request = read_file(argv[4], &request_len);
    uint8_t *signed_request = read_file(argv[5], &signed_len);
    origin = argv[6];
    snprintf(config, sizeof config, "{\"testing\":true,\"clock\":\"%s\"}", clock);
    mdoc_error err;
    int32_t rc;

    /* Versions and names. */
    CHECK(mdoc_abi_version() == MDOC_RESPOND_ABI_VERSION, "ABI version %u", mdoc_abi_version());
    CHECK(mdoc_version() != NULL && strlen(mdoc_version()) > 0, "library version");
    for (int32_t c = 0; c <= 31; c++) CHECK(strcmp(mdoc_status_name(c), "unknown") != 0, "status %d has a name", c);
    for (int32_t c = 100; c <= 103; c++) CHECK(strcmp(mdoc_status_name(c), "unknown") != 0, "status %d has a name", c);
    CHECK(strcmp(mdoc_status_name(32), "unknown") == 0 && strcmp(mdoc_status_name(-1), "unknown") == 0, "unknown codes");
    CHECK(strcmp(mdoc_status_name(MDOC_ERR_ZK_UNSUPPORTED), "zkUnsupported") == 0, "zkUnsupported name");
    CHECK(strcmp(mdoc_status_name(MDOC_ERR_KEY_UNAVAILABLE), "keyUnavailable") == 0, "keyUnavailable name");
    CHECK(strcmp(mdoc_status_name(MDOC_ERR_INVALID_HANDLE), "invalidHandle") == 0, "invalidHandle name");

    /* Opening: bad arguments and configurations. */
    mdoc_engine *engine = (mdoc_engine *)0x1;
    rc = mdoc_engine_open(NULL, NULL, &engine, &err);
    EXPECT_STATUS(rc, MDOC_ERR_INVALID_ARGUMENT, "open: NULL directory");
    CHECK(engine == NULL, "open: output cleared on failure");
    EXPECT_STATUS(mdoc_engine_open(context_dir, NULL, NULL, &err), MDOC_ERR_INVALID_ARGUMENT, "open: NULL output");
    EXPECT_STATUS(mdoc_engine_open("", NULL, &engine, &err), MDOC_ERR_INVALID_ARGUMENT, "open: empty directory");
    EXPECT_STATUS(mdoc_engine_open("/nonexistent/mdoc-context", NULL, &engine, NULL), MDOC_ERR_CONTEXT_UNAVAILABLE,
                  "open: no context there");
    /* Each refused by its rule (the detail begins "configuration.<rule>: "), never echoing the input. */
    const char *bad_configs[][2] = {
        {"not json", "notJSON"}, {"[]", "notObject"}, {"{\"clokc\":\"2026-06-01T00:00:00Z\"}", "unknownMember"},
        {"{\"clock\":\"yesterday\"}", "notDate"}, {"{\"clock\":\"2030-01-01T00:00:00Z\"}", "testingOnly"}, {"{\"protocol\":\"smtp\"}", "notOneOf"},
        {"{\"limits\":{\"maxRequestBytes\":0}}", "outOfRange"}, {"{\"limits\":{\"maxDocRequests\":1.5}}", "outOfRange"},
        {"{\"limits\":{\"bogus\":1}}", "unknownMember"}, {"{\"trust\":{\"anchors\":[\"!!\"]}}", "notCertificate"},
        {"{\"trust\":{\"anchors\":[\"AAAA\"]}}", "notCertificate"}, {"{\"trust\":{\"authorities\":[\"xyz\"]}}", "notKeyIdentifier"},
        {"{\"selfCheck\":\"yes\"}", "notBoolean"}, {"{\"missingElements\":\"drop\"}", "notOneOf"},
        {"{\"keyDirectory\":\"/tmp\"}", "notApplicable"}, {"{\"clock\":1}", "notDate"}, {"{\"a\":1,\"a\":2}", "notJSON"},
        {"{\"protocols\":[]}", "notList"}, {"{\"protocols\":[\"smtp\"]}", "notOneOf"},
        {"{\"errorDisclosure\":\"vague\"}", "notOneOf"},
    };
    for (size_t i = 0; i < sizeof bad_configs / sizeof *bad_configs; i++) {
        rc = mdoc_engine_open(context_dir, bad_configs[i][0], &engine, &err);
        EXPECT_STATUS(rc, MDOC_ERR_INVALID_CONFIGURATION, bad_configs[i][0]);
        CHECK(engine == NULL, "bad configuration: no engine");
        char want[64];
        snprintf(want, sizeof want, "configuration.%s: ", bad_configs[i][1]);
        CHECK(strncmp(err.detail, want, strlen(want)) == 0, "%s: refused by %s (detail: %s)", bad_configs[i][0], want,
              err.detail);
        /* No value is echoed; an unknown member is named (the operator's typo, to be fixed). */
        CHECK(strstr(err.detail, "smtp") == NULL && strstr(err.detail, "yesterday") == NULL, "%s: no value echoed",
              bad_configs[i][0]);
        if (strcmp(bad_configs[i][1], "unknownMember") == 0)
            CHECK(strstr(err.detail, "clokc") != NULL || strstr(err.detail, "bogus") != NULL,
                  "%s: the unknown member named", bad_configs[i][0]);
    }

    /* An observer: one event per call with the operation and outcome, none of the request's content. */
    {
        mdoc_engine *observed = NULL;
        struct observed seen = {0, ""};
        EXPECT_STATUS(mdoc_engine_open_observed(context_dir, config, NULL, &seen, &observed, &err),
                      MDOC_ERR_INVALID_ARGUMENT, "open observed: NULL observer");
        CHECK(observed == NULL, "open observed: NULL observer gives no engine");
        EXPECT_STATUS(mdoc_engine_open_observed(context_dir, config, observe, &seen, &observed, &err), MDOC_OK,
                      "open observed");
        accept_ok(observed, "accept through an observed engine");
        CHECK(seen.events == 1 && strstr(seen.last, "\"operation\":\"accept\"") != NULL
                  && strstr(seen.last, "\"code\":null") != NULL,
              "observer: one accept event (%d: %s)", seen.events, seen.last);
        CHECK(strstr(seen.last, origin) == NULL, "observer: the origin is not in the event");
        mdoc_engine_release(observed);
    }

    /* protocols: an engine answering OpenID4VP only finds no entry in the Annex C request. */
    {
        char c2[256];
        snprintf(c2, sizeof c2, "{\"testing\":true,\"clock\":\"%s\",\"protocols\":[\"openID4VP\"]}", clock);
        mdoc_engine *only = NULL;
        EXPECT_STATUS(mdoc_engine_open(context_dir, c2, &only, &err), MDOC_OK, "open: protocols openID4VP");
        expect_accept_refused(only, request, request_len, origin, MDOC_ERR_UNSUPPORTED_PROTOCOL, "framing.noEntry",
                              "accept: Annex C entry, OpenID4VP only");
        mdoc_engine_release(only);
    }
    /* errorDisclosure: every credential expired at this clock; exact says so, uniform does not. */
    {
        mdoc_engine *exact = NULL, *uniform = NULL;
        EXPECT_STATUS(mdoc_engine_open(context_dir, "{\"testing\":true,\"clock\":\"2099-01-01T00:00:00Z\"}", &exact, &err), MDOC_OK,
                      "open: late clock");
        EXPECT_STATUS(mdoc_engine_open(context_dir,
                                       "{\"testing\":true,\"clock\":\"2099-01-01T00:00:00Z\",\"errorDisclosure\":\"uniform\"}",
                                       &uniform, &err),
                      MDOC_OK, "open: late clock, uniform disclosure");
        expect_accept_refused(exact, request, request_len, origin, MDOC_ERR_NO_MATCHING_CREDENTIAL,
                              "selection.noUsableCredential", "accept: nothing valid, exact disclosure");
        expect_accept_refused(uniform, request, request_len, origin, MDOC_ERR_CANNOT_SATISFY_REQUEST,
                              "selection.notAnswered", "accept: nothing valid, uniform disclosure");
        mdoc_engine_release(exact);
        mdoc_engine_release(uniform);
    }
    char *huge = malloc(MDOC_MAX_JSON_BYTES + 2);
    memset(huge, ' ', MDOC_MAX_JSON_BYTES + 1);
    huge[MDOC_MAX_JSON_BYTES + 1] = 0;
    EXPECT_STATUS(mdoc_engine_open(context_dir, huge, &engine, &err), MDOC_ERR_LIMIT_EXCEEDED, "open: oversized configuration");

    /* An insecure context (group-readable file) is refused. */
    char insecure[4096];
    snprintf(insecure, sizeof insecure, "%s/context.cbor", context_dir);
    chmod(insecure, 0644);
    EXPECT_STATUS(mdoc_engine_open(context_dir, config, &engine, &err), MDOC_ERR_CONTEXT_INSECURE, "open: mode 0644");
    chmod(insecure, 0600);

    rc = mdoc_engine_open(context_dir, config, &engine, &err);
    EXPECT_STATUS(rc, MDOC_OK, "open");
    if (rc != MDOC_OK) {
        fprintf(stderr, "cannot continue: %s\n", err.detail);
        return 1;
    }

    /* accept. */
    size_t full_len = accept_ok(engine, "accept");

    /* accept: every argument class refused. */
    expect_accept_refused(NULL, request, request_len, origin, MDOC_ERR_INVALID_ARGUMENT, NULL, "accept: NULL engine");
    expect_accept_refused((mdoc_engine *)0x1230, request, request_len, origin, MDOC_ERR_INVALID_HANDLE, NULL, "accept: forged handle");
    expect_accept_refused(engine, NULL, 10, origin, MDOC_ERR_INVALID_ARGUMENT, NULL, "accept: NULL request");
    expect_accept_refused(engine, request, 0, origin, MDOC_ERR_INVALID_ARGUMENT, NULL, "accept: zero length");
    /* A length past the limit is refused before a byte is read (the buffer is far smaller). */
    expect_accept_refused(engine, request, (size_t)1 << 40, origin, MDOC_ERR_LIMIT_EXCEEDED, NULL, "accept: oversized length");
    expect_accept_refused(engine, request, request_len, NULL, MDOC_ERR_MISSING_ORIGIN, NULL, "accept: NULL origin");
    expect_accept_refused(engine, request, request_len, "ftp://verifier.example", MDOC_ERR_INVALID_ORIGIN, "origin.scheme", "accept: ftp origin");
    expect_accept_refused(engine, request, request_len, "https://ver\xff\xfe.example", MDOC_ERR_INVALID_ARGUMENT, NULL,
                          "accept: origin not UTF-8");
    char *long_origin = malloc(MDOC_MAX_ORIGIN_BYTES + 100);
    strcpy(long_origin, "https://");
    memset(long_origin + 8, 'a', MDOC_MAX_ORIGIN_BYTES + 80);
    long_origin[MDOC_MAX_ORIGIN_BYTES + 88] = 0;
    expect_accept_refused(engine, request, request_len, long_origin, MDOC_ERR_LIMIT_EXCEEDED, NULL, "accept: origin too long");
    const uint8_t not_json[] = "\x00\x01\x02 not json";
    expect_accept_refused(engine, not_json, sizeof not_json - 1, origin, MDOC_ERR_MALFORMED_REQUEST, "framing.json", "accept: not JSON");
    const uint8_t empty_object[] = "{}";
    expect_accept_refused(engine, empty_object, 2, origin, MDOC_ERR_MALFORMED_REQUEST, "framing.noFraming", "accept: {}");
    /* The request minus its last byte (truncated JSON). */
    expect_accept_refused(engine, request, request_len - 1, origin, MDOC_ERR_MALFORMED_REQUEST, "framing.json", "accept: truncated");
    /* The signed request from another origin: its reader signature covers the transcript, which binds the origin. */
    expect_accept_refused(engine, signed_request, signed_len, "https://evil.example", MDOC_ERR_READER_AUTHENTICATION_FAILED,
                          "annexC.signatureInvalid", "accept: signed request replayed from another origin");
    uint8_t *out = (uint8_t *)0x1;
    size_t out_len = 5;
    EXPECT_STATUS(mdoc_accept(engine, request, request_len, origin, NULL, &out_len, &err), MDOC_ERR_INVALID_ARGUMENT,
                  "accept: NULL response pointer");
    CHECK(out_len == 0, "accept: length cleared");
    EXPECT_STATUS(mdoc_accept(engine, request, request_len, origin, &out, NULL, &err), MDOC_ERR_INVALID_ARGUMENT,
                  "accept: NULL length pointer");
    CHECK(out == NULL, "accept: response cleared");
    /* A NULL error struct is allowed. */
    EXPECT_STATUS(mdoc_accept(engine, request, 0, origin, &out, &out_len, NULL), MDOC_ERR_INVALID_ARGUMENT,
                  "accept: NULL error struct");

    /* Configuration knobs take effect. */
    mdoc_engine *strict = NULL;
    char strict_config[512];
    snprintf(strict_config, sizeof strict_config, "{\"testing\":true,\"clock\":\"%s\",\"trust\":{\"requireReaderAuthentication\":true}}", clock);
    EXPECT_STATUS(mdoc_engine_open(context_dir, strict_config, &strict, &err), MDOC_OK, "open: requireReaderAuthentication");
    expect_accept_refused(strict, request, request_len, origin, MDOC_ERR_READER_AUTHENTICATION_REQUIRED,
                          "trust.signatureRequired", "trust policy from the configuration");
    mdoc_engine_release(strict);
    mdoc_engine *small = NULL;
    EXPECT_STATUS(mdoc_engine_open(context_dir, "{\"testing\":true,\"clock\":\"2026-06-01T00:00:00Z\",\"limits\":{\"maxRequestBytes\":64}}", &small, &err),
                  MDOC_OK, "open: small limit");
    expect_accept_refused(small, request, request_len, origin, MDOC_ERR_LIMIT_EXCEEDED, NULL, "limits from the configuration");
    mdoc_engine_release(small);
    mdoc_engine *late = NULL;
    EXPECT_STATUS(mdoc_engine_open(context_dir, "{\"testing\":true,\"clock\":\"2040-01-01T00:00:00Z\"}", &late, &err), MDOC_OK, "open: late clock");
    expect_accept_refused(late, request, request_len, origin, MDOC_ERR_NO_MATCHING_CREDENTIAL, "selection.noUsableCredential", "clock from the configuration");
    mdoc_engine_release(late);

    /* Two-phase: parse, consent model, respond with narrower approvals. */
    mdoc_request *parsed = (mdoc_request *)0x1;
    EXPECT_STATUS(mdoc_parse(engine, request, 0, origin, &parsed, &err), MDOC_ERR_INVALID_ARGUMENT, "parse: zero length");
    CHECK(parsed == NULL, "parse: output cleared");
    rc = mdoc_parse(engine, request, request_len, origin, &parsed, &err);
    EXPECT_STATUS(rc, MDOC_OK, "parse");
    char *json = NULL;
    size_t json_len = 0;
    rc = mdoc_request_consent_json(parsed, &json, &json_len, &err);
    EXPECT_STATUS(rc, MDOC_OK, "consent json");
    CHECK(json != NULL && strlen(json) == json_len, "consent json is NUL-terminated with its length");
    CHECK(json && strstr(json, "\"protocol\":\"org-iso-mdoc\"") != NULL, "consent json names the protocol");
    CHECK(json && strstr(json, "\"org.iso.18013.5.1/family_name\"") != NULL, "consent json lists requested elements");
    CHECK(json && strstr(json, "\"credential\":\"mdl\"") != NULL, "consent json lists the candidate");
    CHECK(json && strstr(json, origin) == NULL, "consent json does not echo the origin");
    mdoc_free(json);

    size_t narrow_len = 0;
    rc = mdoc_respond(parsed, "{\"approve\":[\"org.iso.18013.5.1/family_name\"]}", &out, &out_len, &err);
    EXPECT_STATUS(rc, MDOC_OK, "respond: one element approved");
    narrow_len = out_len;
    mdoc_free(out);
    CHECK(narrow_len > 0 && narrow_len + 1000 < full_len, "a narrower approval gives a smaller response (%zu vs %zu)",
          narrow_len, full_len);
    rc = mdoc_respond(parsed, "{\"approve\":{\"0\":[\"org.iso.18013.5.1/family_name\"]},\"using\":{\"0\":\"mdl\"}}", &out,
                      &out_len, &err);
    EXPECT_STATUS(rc, MDOC_OK, "respond: per document, using mdl");
    mdoc_free(out);
    rc = mdoc_respond(parsed, NULL, &out, &out_len, &err);
    EXPECT_STATUS(rc, MDOC_OK, "respond: NULL approval = all shown");
    CHECK(out_len + 200 > full_len && out_len < full_len + 200, "approve all matches accept (%zu vs %zu)", out_len, full_len);
    mdoc_free(out);
    EXPECT_STATUS(mdoc_respond(parsed, "{\"approve\":[]}", &out, &out_len, &err), MDOC_ERR_CANNOT_SATISFY_REQUEST,
                  "respond: nothing approved");
    EXPECT_STATUS(mdoc_respond(parsed, "{\"approve\":[\"org.iso.18013.5.1/family_name\"],\"consented\":{\"org.iso.18013.5.1.mDL\":[\"org.iso.18013.5.1/given_name\"]}}",
                               &out, &out_len, &err),
                  MDOC_ERR_CONSENT_MISMATCH, "respond: request beyond what the platform showed");
    EXPECT_STATUS(mdoc_respond(parsed, "{\"using\":{\"0\":\"pid\"}}", &out, &out_len, &err), MDOC_ERR_CANNOT_SATISFY_REQUEST,
                  "respond: using a credential that cannot answer");
    const char *bad_approvals[] = {
        "nope", "{\"approve\":\"some\"}", "{\"approve\":[\"no-slash\"]}", "{\"approve\":[1]}", "{\"approve\":{\"x\":[]}}",
        "{\"approve\":{\"01\":[]}}", "{\"using\":{\"0\":5}}", "{\"consented\":[]}", "{\"approved\":\"all\"}",
    };
    for (size_t i = 0; i < sizeof bad_approvals / sizeof *bad_approvals; i++) {
        out = (uint8_t *)0x1;
        rc = mdoc_respond(parsed, bad_approvals[i], &out, &out_len, &err);
        EXPECT_STATUS(rc, MDOC_ERR_INVALID_APPROVAL, bad_approvals[i]);
        CHECK(out == NULL && out_len == 0, "bad approval: no output");
    }
    EXPECT_STATUS(mdoc_respond(parsed, huge, &out, &out_len, &err), MDOC_ERR_LIMIT_EXCEEDED, "respond: oversized approval");
    EXPECT_STATUS(mdoc_respond(parsed, NULL, NULL, &out_len, &err), MDOC_ERR_INVALID_ARGUMENT, "respond: NULL output");
    EXPECT_STATUS(mdoc_request_consent_json(parsed, NULL, &json_len, &err), MDOC_ERR_INVALID_ARGUMENT, "consent: NULL output");

    /* Handle misuse: wrong kind, release twice, use after release. */
    EXPECT_STATUS(mdoc_accept((mdoc_engine *)parsed, request, request_len, origin, &out, &out_len, &err),
                  MDOC_ERR_INVALID_HANDLE, "accept: a request handle as the engine");
    EXPECT_STATUS(mdoc_respond((mdoc_request *)engine, NULL, &out, &out_len, &err), MDOC_ERR_INVALID_HANDLE,
                  "respond: an engine handle as the request");
    EXPECT_STATUS(mdoc_request_release((mdoc_request *)engine), MDOC_ERR_INVALID_HANDLE, "release an engine as a request");
    EXPECT_STATUS(mdoc_engine_release((mdoc_engine *)parsed), MDOC_ERR_INVALID_HANDLE, "release a request as an engine");
    EXPECT_STATUS(mdoc_request_release(NULL), MDOC_ERR_INVALID_ARGUMENT, "release NULL request");
    EXPECT_STATUS(mdoc_engine_release(NULL), MDOC_ERR_INVALID_ARGUMENT, "release NULL engine");

    /* A parsed request keeps its engine alive after the engine handle is released. */
    mdoc_engine *second = NULL;
    mdoc_request *orphan = NULL;
    EXPECT_STATUS(mdoc_engine_open(context_dir, config, &second, &err), MDOC_OK, "open a second engine");
    EXPECT_STATUS(mdoc_parse(second, request, request_len, origin, &orphan, &err), MDOC_OK, "parse on the second engine");
    EXPECT_STATUS(mdoc_engine_release(second), MDOC_OK, "release the second engine");
    EXPECT_STATUS(mdoc_engine_release(second), MDOC_ERR_INVALID_HANDLE, "release the second engine twice");
    expect_accept_refused(second, request, request_len, origin, MDOC_ERR_INVALID_HANDLE, NULL, "accept after release");
    mdoc_request *none = NULL;
    EXPECT_STATUS(mdoc_parse(second, request, request_len, origin, &none, &err), MDOC_ERR_INVALID_HANDLE, "parse after release");
    rc = mdoc_respond(orphan, NULL, &out, &out_len, &err);
    EXPECT_STATUS(rc, MDOC_OK, "respond on a request whose engine was released");
    mdoc_free(out);
    EXPECT_STATUS(mdoc_request_release(orphan), MDOC_OK, "release the orphan request");
    EXPECT_STATUS(mdoc_request_release(orphan), MDOC_ERR_INVALID_HANDLE, "release a request twice");
    EXPECT_STATUS(mdoc_respond(orphan, NULL, &out, &out_len, &err), MDOC_ERR_INVALID_HANDLE, "respond after release");
    EXPECT_STATUS(mdoc_request_consent_json(orphan, &json, &json_len, &err), MDOC_ERR_INVALID_HANDLE, "consent after release");

    /* Snapshot engines: with the key directory they answer; without it, file keys are unavailable. */
    mdoc_engine *mem = NULL;
    char mem_config[4096];
    snprintf(mem_config, sizeof mem_config, "{\"testing\":true,\"clock\":\"%s\",\"keyDirectory\":\"%s\"}", clock, key_dir);
    EXPECT_STATUS(mdoc_engine_open_snapshot(NULL, 10, config, &mem, &err), MDOC_ERR_INVALID_ARGUMENT, "snapshot: NULL");
    EXPECT_STATUS(mdoc_engine_open_snapshot(snapshot, 0, config, &mem, &err), MDOC_ERR_INVALID_ARGUMENT, "snapshot: empty");
    EXPECT_STATUS(mdoc_engine_open_snapshot(snapshot, (size_t)1 << 40, config, &mem, &err), MDOC_ERR_LIMIT_EXCEEDED,
                  "snapshot: oversized length");
    EXPECT_STATUS(mdoc_engine_open_snapshot(snapshot, snapshot_len / 2, config, &mem, &err), MDOC_ERR_CONTEXT_CORRUPT,
                  "snapshot: truncated");
    EXPECT_STATUS(mdoc_engine_open_snapshot((const uint8_t *)"\xa0", 1, config, &mem, &err), MDOC_ERR_CONTEXT_CORRUPT,
                  "snapshot: not a context");
    CHECK(mem == NULL, "snapshot: no engine on failure");
    EXPECT_STATUS(mdoc_engine_open_snapshot(snapshot, snapshot_len, mem_config, &mem, &err), MDOC_OK, "snapshot engine");
    accept_ok(mem, "accept from a snapshot engine");
    mdoc_engine_release(mem);
    EXPECT_STATUS(mdoc_engine_open_snapshot(snapshot, snapshot_len, config, &mem, &err), MDOC_OK,
                  "snapshot engine without a key directory");
    expect_accept_refused(mem, request, request_len, origin, MDOC_ERR_KEY_UNAVAILABLE, "key.token", "file keys need a key directory");
    mdoc_engine_release(mem);

    /* Two threads share the engine: 2 x 200 accepts, all answered. */
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, worker, engine);
    long answered = 0;
    for (int i = 0; i < 2; i++) {
        void *r;
        pthread_join(threads[i], &r);
        answered += (long)r;
    }
    CHECK(answered == 400, "two threads on one engine: %ld of 400 answered", answered);

    EXPECT_STATUS(mdoc_request_release(parsed), MDOC_OK, "release the request");
    EXPECT_STATUS(mdoc_engine_release(engine), MDOC_OK, "release the engine");
    mdoc_free(NULL);
    free(huge);
    free(long_origin);
    free(snapshot);
    free(request);
    free(signed_request);
    printf("abi: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
