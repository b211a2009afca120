// What `import DigitalCredentials` gives a wallet backend: the engine and its configuration, the
// credential context and its store, the trust policy, requests, approvals, verdicts and errors with
// their rules, each protocol's settings and details, and the MdocCBOR types a backend names: a device
// key behind `COSESigner` (its algorithm, public key and error; `SoftwareSigner` for a key held in
// process) and reader trust anchors as `Certificate`; where the Longfellow prover is installed and the
// rules it refuses by.
@_exported import AnnexC
@_exported import DCAPIFraming
@_exported import OpenID4VP
@_exported import Presentment
@_exported import protocol MdocCBOR.COSESigner
@_exported import enum MdocCBOR.COSEAlgorithm
@_exported import struct MdocCBOR.COSEKey
@_exported import struct MdocCBOR.COSEError
@_exported import struct MdocCBOR.SoftwareSigner
@_exported import struct MdocCBOR.Certificate
@_exported import struct Longfellow.LongfellowInstallation
@_exported import enum Longfellow.LongfellowRule
