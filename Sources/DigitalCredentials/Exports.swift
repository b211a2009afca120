// What `import DigitalCredentials` gives a wallet backend: the engine and its configuration, the
// credential context and its store, the trust policy, requests, approvals, verdicts and errors with
// their rules, each protocol's settings and details, and the two MdocCBOR types a backend names
// (a device key behind `COSESigner`, reader trust anchors as `Certificate`).
@_exported import AnnexC
@_exported import DCAPIFraming
@_exported import OpenID4VP
@_exported import Presentment
@_exported import protocol MdocCBOR.COSESigner
@_exported import struct MdocCBOR.Certificate
