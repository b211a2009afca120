// The uniffi C ABI of abetterinternet/zk-cred-longfellow (libzk_cred_longfellow.so, uniffi contract
// version 30), as the generated bindings call it. Every function takes a trailing RustCallStatus the
// caller zero-initializes: code 0 ok, 1 an error object (error_buf holds its 8-byte big-endian handle),
// 2 a panic (error_buf holds its message). RustBuffer arguments are consumed by the callee and must be
// allocated by the library (rustbuffer_alloc / rustbuffer_from_bytes); returned RustBuffers are the
// caller's to free with rustbuffer_free. ForeignBytes are borrowed for the call. Object handles passed
// as arguments are consumed: pass a clone.
#ifndef MDOC_LONGFELLOW_ABI_H
#define MDOC_LONGFELLOW_ABI_H
#include <stdint.h>

typedef struct { uint64_t capacity; uint64_t len; uint8_t *data; } mdoc_lf_rust_buffer;
typedef struct { int32_t len; const uint8_t *data; } mdoc_lf_foreign_bytes;
typedef struct { int8_t code; mdoc_lf_rust_buffer error_buf; } mdoc_lf_call_status;

typedef uint32_t (*mdoc_lf_contract_version_fn)(void);
typedef uint16_t (*mdoc_lf_checksum_fn)(void);
typedef mdoc_lf_rust_buffer (*mdoc_lf_buffer_from_bytes_fn)(mdoc_lf_foreign_bytes, mdoc_lf_call_status *);
typedef void (*mdoc_lf_buffer_free_fn)(mdoc_lf_rust_buffer, mdoc_lf_call_status *);

typedef uint64_t (*mdoc_lf_initialize_fn)(mdoc_lf_foreign_bytes circuit, mdoc_lf_rust_buffer circuit_version,
                                          uint8_t num_attributes, mdoc_lf_call_status *);
typedef mdoc_lf_rust_buffer (*mdoc_lf_prove_fn)(uint64_t prover, mdoc_lf_foreign_bytes device_response,
                                                mdoc_lf_rust_buffer name_space, mdoc_lf_rust_buffer requested_claims,
                                                mdoc_lf_foreign_bytes session_transcript, mdoc_lf_rust_buffer time,
                                                mdoc_lf_call_status *);
typedef void (*mdoc_lf_verify_fn)(uint64_t verifier, mdoc_lf_foreign_bytes issuer_public_key_sec1,
                                  mdoc_lf_rust_buffer attributes, mdoc_lf_rust_buffer doc_type,
                                  mdoc_lf_foreign_bytes device_name_spaces_bytes,
                                  mdoc_lf_foreign_bytes session_transcript, mdoc_lf_rust_buffer time,
                                  mdoc_lf_foreign_bytes proof, mdoc_lf_call_status *);
typedef uint64_t (*mdoc_lf_clone_fn)(uint64_t, mdoc_lf_call_status *);
typedef void (*mdoc_lf_free_fn)(uint64_t, mdoc_lf_call_status *);
typedef mdoc_lf_rust_buffer (*mdoc_lf_display_fn)(uint64_t, mdoc_lf_call_status *);

#endif
