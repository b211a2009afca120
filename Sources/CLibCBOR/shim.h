// Shim for libcbor 0.8 (Debian 12). Only LibCBORPeer (the tests' and the benchmark's peer) imports it.
#ifndef MDOC_CLIBCBOR_SHIM_H
#define MDOC_CLIBCBOR_SHIM_H
#include <cbor.h>

// Exposed so the Swift side can refuse to build against a libcbor whose callback signatures differ
// (0.9 changed string/array/map sizes from size_t to uint64_t).
static const int mdoc_cbor_major_version = CBOR_MAJOR_VERSION;
static const int mdoc_cbor_minor_version = CBOR_MINOR_VERSION;

#endif
