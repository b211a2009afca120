/*
 * mdoc_respond.h: the C ABI of mdoc-respond (libmdocrespond), the wallet side of presenting an mdoc
 * through the W3C Digital Credentials API (ISO/IEC 18013-7 Annex C and OpenID4VP over the DC API).
 *
 * Conventions
 *   - Every function that can fail returns an int32_t status: MDOC_OK (0) or one of the MDOC_ERR_*
 *     codes below. Codes 1-99 are the Swift API's PresentmentError codes, in a fixed numbering that
 *     never changes; codes 100-199 are misuse of this ABI. mdoc_status_name() gives the code's name.
 *   - `error` (mdoc_error *) may be NULL. When given, it is always filled: code, and a NUL-terminated
 *     detail naming the structure and rule broken (static text: never request bytes, element values,
 *     keys, PINs or origins). A longer detail is cut at a UTF-8 character boundary. For codes 1-99 the
 *     detail begins with the rule that refused, `<domain>.<rule>: ` (e.g. `annexC.nonceNotBytes: `,
 *     `dcql.claimPath: `, `trust.readerNotTrusted: `): the Swift API's `PresentmentError.rule`, a
 *     stable identifier to branch or count on; the words after it are for people.
 *   - Output pointers (`*response`, `*json`, `*engine`, `*request`) are set to NULL (lengths to 0)
 *     on entry and set only on success: a failure never returns partial output.
 *   - Buffers returned by the library are released with mdoc_free() (once each; double free of a
 *     buffer is undefined, as with free()).
 *   - Handles (mdoc_engine *, mdoc_request *) are opaque numbers looked up in a registry, never
 *     dereferenced: a released, unknown or wrong-kind handle (an engine passed as a request) is refused
 *     with MDOC_ERR_INVALID_HANDLE, so double release and use after release are detected. Handle values
 *     are never reused within a process.
 *   - Every function is thread-safe. One engine may serve any number of threads at once; a request
 *     handle may be read and answered from several threads. Releasing an engine while calls on it are
 *     running is safe: they finish, and requests parsed from it keep it alive until released.
 *   - Strings in are NUL-terminated UTF-8; JSON out is UTF-8, NUL-terminated, length excluding the NUL.
 *
 * Configuration JSON (mdoc_engine_open*, `config_json` may be NULL for the defaults): the same document
 * as the CLI's `--config` and Python's `config=`, each member one field of the Swift configuration.
 * Every member is optional; unknown members are refused (MDOC_ERR_INVALID_CONFIGURATION), so typos do
 * not pass silently. A refusal's detail begins with its rule, "configuration.<rule>: <member> ...":
 * notJSON, notObject, unknownMember, notBoolean, notOneOf, notDate, outOfRange, notList, notCertificate,
 * notKeyIdentifier, emptyAllowList, notPath, widensPolicy, notApplicable, testingOnly (an unknown
 * member is named, e.g. "trust.requireTrustedReadr", when its name is a plain identifier; no value is
 * ever echoed).
 *   {
 *     "clock": "2026-06-01T00:00:00Z",   FOR TESTING: a fixed RFC 3339 time for validity checks (default:
 *                                          system time); refused (testingOnly) unless "testing": true
 *                                          (or trust.replacePolicy) is set; the consent model shows
 *                                          it as "fixedClock"
 *     "testing": true,                   allows "clock" (default false)
 *     "protocols": ["annexC", "openID4VP"],   the protocols this engine answers (default: both); an
 *                                          entry of another protocol is no entry (framing.noEntry)
 *     "protocol": "answerable" | "annexC" | "openID4VP",   which protocol answers when a page offers both
 *     "errorDisclosure": "exact" | "uniform",   uniform: every selection refusal (no usable credential,
 *                                          nothing approved, no answerable use case) is
 *                                          MDOC_ERR_CANNOT_SATISFY_REQUEST "selection.notAnswered", so
 *                                          the page cannot tell a credential not held from a decline
 *     "missingElements": "omit" | "report",   Annex C: leave out, or report, requested elements not held
 *     "selfCheck": false,                  re-verify each response before sealing
 *     "allowAppOrigins": false,            accept android:apk-key-hash: origins
 *     "preferA256GCM": true,               OpenID4VP: A256GCM (else A128GCM) when the verifier offers both
 *     "limits": {                          integers from 1 to 2^30
 *       "maxRequestBytes", "maxDocuments" (DocRequests or DCQL credential queries; also read under its
 *       earlier names "maxDocRequests" and "maxCredentialQueries"), "maxRequestedElements",
 *       Annex C's "maxAlternativeSetSize", "maxNestingDepth", "maxDataItems" },
 *     "trust": {                           narrows the context's stored reader-trust policy field by field
 *       "anchors": ["<base64 DER certificate>", ...],   a subset of the stored anchors
 *       "authorities": ["<hex AKI>", ...],   only readers issued by these authorities may ask (non-empty;
 *                                            a subset of a stored allow-list)
 *       "requireReaderAuthentication": false,   may turn a requirement on, not off
 *       "requireTrustedReader": false,
 *       "signerProfile": "mdocReader" | "requestSigner",   the end-entity profile in both protocols
 *       "replacePolicy": false               true: the members above replace the stored policy even
 *                                            where they widen it; without it a widening member is
 *                                            refused (MDOC_ERR_INVALID_CONFIGURATION)
 *     },
 *     "zeroKnowledge": {                   proofs for requests with requestInfo.zkRequest (ISO 18013-7 Annex C)
 *       "directory": "/path",              the Longfellow prover's installation (lib/, circuits/; default:
 *                                          $MDOC_ZK_DIR, else ${XDG_DATA_HOME:-~/.local/share}/mdoc-respond/zk,
 *                                          where scripts/zk-setup.sh installs it)
 *       "enabled": true,                   false: no proofs (a required proof is refused, zk.noProver)
 *       "maxConcurrentProofs": 1,          proofs running at once (each up to 0.8 GB)
 *       "maxProofsPerResponse": 1,         documents proven in one response
 *       "proofTimeLimit": 60               seconds per proof, waiting for a slot included
 *     },
 *     "keyDirectory": "/path",             snapshot engines only: where relative key files are found
 *     "pkcs11ModuleDirectories": ["/usr/lib/x86_64-linux-gnu/pkcs11", ...]   the only directories a
 *                                          pkcs11: key's module-path may lie in (default: the system's
 *                                          PKCS#11 module directories and SoftHSM2's)
 *   }
 *
 * Consent model JSON (mdoc_request_consent_json): schema include/mdoc_consent_model.schema.json,
 * "schemaVersion": 1, the same as Python's Request.consent and `mdoc-respond inspect --json`'s "consent":
 * { "schemaVersion", "protocol", "protocolChoice", "readerVerdict", "signedByDifferentReaders",
 * "signers": [{ "label", "clientID", "subject", "verdict" }], "credentialQueryIDs",
 * "documents": [{ "index", "docType", "readerVerdict", "readerAuthentication", "requested",
 * "elements": [{ "id", "intentToRetain", "values" }], "alternatives", "ignoredAlternatives", "claimSets",
 * "valueRestricted", "maximumResponseSize", "presentableWithoutElements", "zeroKnowledge",
 * "candidates": [{ "credential", "releasable", "substitutions", "missing", "wouldRelease", "provenClaims" }],
 * "excluded": [{ "credential", "reason" }] }] }.
 * "zeroKnowledge" (a proof request, else null): { "required", "systems", "systemIDs",
 * "plainPresentationReveals", "answer": { "form": "proof", "zkSystemId", "system", "circuitHash", "version",
 * "attributes", "expectedSeconds", "reveals" } | { "form": "plainFallback", "why", "needsApproval", "reveals" } }.
 * Elements are "namespace/identifier" strings. Element values from credentials never appear (a
 * DCQL "values" list is what the verifier sent), except a proven document's "provenClaims": the claims
 * a proof reveals in plaintext, each with its value in CBOR diagnostic notation.
 *
 * Approval JSON (mdoc_respond, `approval_json` may be NULL for {"approve": "all"}):
 *   {
 *     "approve": "all"                                 everything shown (substitutes included)
 *              | ["ns/elem", ...]                      only these, in every document
 *              | {"0": ["ns/elem", ...], "1": [...]},  per document index
 *     "using": {"0": "credential-id"},                 which candidate answers a document (default: best)
 *     "consented": {"docType": ["ns/elem", ...]}       what the platform showed; a request or response
 *                                                      beyond it is refused with MDOC_ERR_CONSENT_MISMATCH
 *     "plainFallback": [0, ...]                        documents whose proof request (consent model
 *                                                      zeroKnowledge.answer.form "plainFallback") the holder
 *                                                      agreed to answer with a plain, linkable presentation;
 *                                                      otherwise such a document is refused
 *                                                      (MDOC_ERR_ZK_UNSUPPORTED, "zk.fallbackNotApproved")
 *   }
 *   An approval only narrows: approving an element that was not shown releases nothing. A document is
 *   presented only when the approval covers it: "all" covers what releases an element (and a DCQL query
 *   without claims); an array covers a document releasing one of its elements ([] presents nothing);
 *   an object covers the indexes it lists, and {"1": []} presents document 1 with no element
 *   (document-level consent; "presentableWithoutElements" in the consent model says where allowed).
 */
#ifndef MDOC_RESPOND_H
#define MDOC_RESPOND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes; mdoc_abi_version() returns the library's. Incremented on any
 * incompatible change; check it at startup. */
#define MDOC_RESPOND_ABI_VERSION 1

/* Capacity of mdoc_error.detail, including the terminating NUL. */
#define MDOC_DETAIL_CAPACITY 256

/* Status codes. 1-30: PresentmentError.Code of the Swift API (same names, camelCase in
 * mdoc_status_name()). */
#define MDOC_OK 0
#define MDOC_ERR_UNSUPPORTED_PROTOCOL 1
#define MDOC_ERR_MISSING_ORIGIN 2
#define MDOC_ERR_INVALID_ORIGIN 3
#define MDOC_ERR_MALFORMED_REQUEST 4
#define MDOC_ERR_INVALID_ENCRYPTION_INFO 5
#define MDOC_ERR_UNSUPPORTED_RECIPIENT_KEY 6
#define MDOC_ERR_INVALID_DEVICE_REQUEST 7
#define MDOC_ERR_READER_AUTHENTICATION_FAILED 8
#define MDOC_ERR_READER_AUTHENTICATION_REQUIRED 9
#define MDOC_ERR_UNTRUSTED_READER 10
#define MDOC_ERR_NO_MATCHING_CREDENTIAL 11
#define MDOC_ERR_CANNOT_SATISFY_REQUEST 12
#define MDOC_ERR_CONSENT_MISMATCH 13
#define MDOC_ERR_RESPONSE_TOO_LARGE 14
#define MDOC_ERR_LIMIT_EXCEEDED 15
#define MDOC_ERR_CONTEXT_UNAVAILABLE 16
#define MDOC_ERR_CONTEXT_CORRUPT 17
#define MDOC_ERR_CONTEXT_INSECURE 18
#define MDOC_ERR_CONTEXT_BUSY 19
#define MDOC_ERR_UNKNOWN_CREDENTIAL 20
#define MDOC_ERR_DUPLICATE_CREDENTIAL 21
#define MDOC_ERR_KEY_UNAVAILABLE 22
#define MDOC_ERR_SIGNING_FAILED 23
#define MDOC_ERR_SEALING_FAILED 24
#define MDOC_ERR_SELF_CHECK_FAILED 25
#define MDOC_ERR_RESPONSE_INVALID 26
#define MDOC_ERR_INVALID_REQUEST 27
#define MDOC_ERR_UNSUPPORTED_CLIENT_IDENTIFIER 28
#define MDOC_ERR_ORIGIN_MISMATCH 29
#define MDOC_ERR_UNSUPPORTED_TRANSACTION_DATA 30
#define MDOC_ERR_ZK_UNSUPPORTED 31
/* Misuse of the ABI. */
#define MDOC_ERR_INVALID_ARGUMENT 100      /* a NULL pointer, an empty input, text that is not UTF-8 */
#define MDOC_ERR_INVALID_HANDLE 101        /* released, unknown, or the wrong kind of handle */
#define MDOC_ERR_INVALID_CONFIGURATION 102 /* configuration JSON malformed, unknown member, bad value */
#define MDOC_ERR_INVALID_APPROVAL 103      /* approval JSON malformed, unknown member, bad value */

/* Input bounds, checked before anything is copied; larger is MDOC_ERR_LIMIT_EXCEEDED. A request is
 * bounded by the engine's "maxRequestBytes" (default 256 KiB). Strings are measured with a bounded scan,
 * never read past the bound plus one byte. */
#define MDOC_MAX_JSON_BYTES (1u << 20)      /* configuration and approval JSON */
#define MDOC_MAX_ORIGIN_BYTES 4096u         /* an origin */
#define MDOC_MAX_PATH_BYTES 4096u           /* a context directory path */
#define MDOC_MAX_SNAPSHOT_BYTES (64u << 20) /* snapshot bytes (the context file's own limit) */

/* Every call's outcome. Caller-owned; may live on the stack. */
typedef struct mdoc_error {
    int32_t code;
    char detail[MDOC_DETAIL_CAPACITY];
} mdoc_error;

/* An engine over one credential context (immutable; see the threading note above). */
typedef struct mdoc_engine mdoc_engine;
/* A parsed request: the consent model, answered with mdoc_respond. */
typedef struct mdoc_request mdoc_request;

/* The library's ABI version (compare with MDOC_RESPOND_ABI_VERSION). */
uint32_t mdoc_abi_version(void);
/* The library version, a static string like "0.20.0" (the repository's VERSION file). */
const char *mdoc_version(void);
/* A status code's name ("keyUnavailable", "invalidHandle", "ok"), or "unknown"; static storage. */
const char *mdoc_status_name(int32_t code);

/* Opens the credential context in `context_dir` (the directory `mdoc-respond context` manages; its
 * files must be the user's own, mode 0600). Device keys are resolved when first used. */
int32_t mdoc_engine_open(const char *context_dir, const char *config_json, mdoc_engine **engine,
                         mdoc_error *error);
/* An observer: called after every mdoc_accept, mdoc_parse and mdoc_respond of an engine opened with
 * it (and after every refusal), on the calling thread before the call returns, with `context` as given
 * and one JSON object valid during the call:
 *   {"operation": "accept"|"parse"|"respond", "protocol": "annexC"|"openID4VP"|null,
 *    "code": null | an error name, "rule": null | "domain.rule",
 *    "readerVerdict": null | "notAuthenticated"|"trusted"|"signedNotTrusted", "seconds": 0.000123,
 *    "stages": {"read": s, "check": s, "plan": s, "build": s, "seal": s}}
 * `stages` holds, in that order, the seconds of the stages the call ran: read (the framing and the
 * origin), check (the request, its signatures, the trust policy), plan (selection; parse: the consent
 * model), build (the DeviceResponses, signatures, proofs), seal (encryption and framing).
 * Counts and timings only: never request content, element values, origins, credentials or keys. Keep it
 * quick (the caller waits) and callable from every thread that calls the engine. */
typedef void (*mdoc_observer_fn)(void *context, const char *event_json);
/* mdoc_engine_open with an observer (MDOC_ERR_INVALID_ARGUMENT when `observer` is NULL). Without one the
 * engine measures nothing. */
int32_t mdoc_engine_open_observed(const char *context_dir, const char *config_json, mdoc_observer_fn observer,
                                  void *observer_context, mdoc_engine **engine, mdoc_error *error);
/* Opens a context from snapshot bytes (the contents of context.cbor) held in memory. Key files are
 * found under the configuration's "keyDirectory"; pkcs11: key references need none. The snapshot is
 * trusted input: it names key files and PKCS#11 modules (a module is loaded only from the
 * configuration's "pkcs11ModuleDirectories"), and its reader-trust policy is the holder's. Hand it only
 * bytes this wallet wrote. */
int32_t mdoc_engine_open_snapshot(const uint8_t *snapshot, size_t snapshot_len, const char *config_json,
                                  mdoc_engine **engine, mdoc_error *error);
/* Releases an engine handle. MDOC_ERR_INVALID_HANDLE when it was released already or is not an engine. */
int32_t mdoc_engine_release(mdoc_engine *engine);

/* Answers a raw Digital Credentials request (the JSON the browser handed over) from `origin` in one
 * call, releasing everything requested and held; the response comes back in the request's framing.
 * Free *response with mdoc_free. */
int32_t mdoc_accept(mdoc_engine *engine, const uint8_t *request, size_t request_len, const char *origin,
                    uint8_t **response, size_t *response_len, mdoc_error *error);

/* Parses a raw request for a consent screen. Release *parsed with mdoc_request_release. */
int32_t mdoc_parse(mdoc_engine *engine, const uint8_t *request, size_t request_len, const char *origin,
                   mdoc_request **parsed, mdoc_error *error);
/* The consent model of a parsed request as JSON (see above). Free *json with mdoc_free. */
int32_t mdoc_request_consent_json(mdoc_request *parsed, char **json, size_t *json_len, mdoc_error *error);
/* Answers a parsed request with the holder's approval (JSON, see above; NULL = approve all shown).
 * May be called more than once (each call signs and seals afresh). Free *response with mdoc_free. */
int32_t mdoc_respond(mdoc_request *parsed, const char *approval_json, uint8_t **response, size_t *response_len,
                     mdoc_error *error);
/* Releases a parsed request handle. MDOC_ERR_INVALID_HANDLE when released already or not a request. */
int32_t mdoc_request_release(mdoc_request *parsed);

/* Frees a buffer this library returned (NULL is ignored). */
void mdoc_free(void *buffer);

#ifdef __cplusplus
}
#endif

#endif /* MDOC_RESPOND_H */
