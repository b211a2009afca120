internal import CryptoCore

extension HPKE {
    /// Optional inputs of the PSK and auth modes.
    public struct SetupOptions: Sendable {
        /// Pre-shared key (psk and authPSK modes); at least 32 bytes of entropy recommended.
        public var psk: [UInt8]
        /// Identifier of the pre-shared key.
        public var pskID: [UInt8]

        /// Creates options; empty psk/pskID mean "no PSK".
        public init(psk: [UInt8] = [], pskID: [UInt8] = []) {
            self.psk = psk
            self.pskID = pskID
        }
    }

    /// The sender's context (`SetupBaseS`, `SetupPSKS`, `SetupAuthS`, `SetupAuthPSKS`). Not copyable:
    /// a copy would reuse nonces. Secrets are cleansed when it is destroyed.
    public struct Sender: ~Copyable, Sendable {
        /// The encapsulated key to send to the recipient.
        public let encapsulatedKey: [UInt8]
        var core: ContextCore

        /// Sets up a sender context.
        /// - Parameters:
        ///   - suite: the ciphersuite.
        ///   - recipient: the recipient's public key (pkR).
        ///   - info: application info bound into the key schedule.
        ///   - options: psk and psk_id for the psk modes.
        ///   - sender: (`authenticatedBy`) the sender's private key (skS) for the auth modes.
        public init(
            suite: Ciphersuite, recipient: PublicKey, info: [UInt8], options: SetupOptions = SetupOptions(),
            authenticatedBy sender: PrivateKey? = nil
        ) throws(HPKE.Error) {
            let ephemeral = try PrivateKey.generate(kem: suite.kem)
            try self.init(
                suite: suite, recipient: recipient, info: info, options: options, authenticatedBy: sender,
                ephemeralKey: ephemeral)
        }

        /// Sets up a sender context with a caller-supplied ephemeral key. For known-answer tests only:
        /// reusing an ephemeral key breaks HPKE's security.
        public init(
            suite: Ciphersuite, recipient: PublicKey, info: [UInt8], options: SetupOptions = SetupOptions(),
            authenticatedBy sender: PrivateKey? = nil, ephemeralKey: PrivateKey
        ) throws(HPKE.Error) {
            guard recipient.kem == suite.kem else { throw .kemMismatch }
            let (shared, enc) = try DHKEM(suite.kem).encap(
                recipient: recipient, sender: sender, ephemeral: ephemeralKey)
            var s = shared
            defer { SecureBytes.cleanse(&s) }
            let mode = Self.mode(psk: !options.psk.isEmpty || !options.pskID.isEmpty, auth: sender != nil)
            let schedule = try KeySchedule.derive(
                suite: suite, mode: mode, sharedSecret: s, info: info, psk: options.psk, pskID: options.pskID)
            encapsulatedKey = enc
            core = ContextCore(suite: suite, schedule: schedule)
        }

        static func mode(psk: Bool, auth: Bool) -> Mode {
            switch (psk, auth) {
            case (false, false): .base
            case (true, false): .psk
            case (false, true): .auth
            case (true, true): .authPSK
            }
        }

        /// The sequence number of the next message to seal.
        public var sequenceNumber: UInt64 { core.sequence }

        /// `Seal(aad, pt)`: encrypts with the next nonce and advances the sequence number.
        public mutating func seal(_ plaintext: [UInt8], aad: [UInt8] = []) throws(HPKE.Error) -> [UInt8] {
            guard let aead = core.suite.aead.algorithm else { throw .exportOnly }
            guard core.sequence < UInt64.max else { throw .messageLimitReached }
            let ct: [UInt8]
            do { ct = try aead.seal(key: core.schedule.key, nonce: core.nonce(), plaintext: plaintext, aad: aad) } catch
            { throw .invalidLength }
            try core.increment()
            return ct
        }

        /// `Seal(aad, pt)` writing `ciphertext ‖ tag` at the end of `output` (no intermediate buffer;
        /// the output grows by `plaintext.count + Nt`).
        public mutating func seal(_ plaintext: [UInt8], aad: [UInt8] = [], appendingTo output: inout [UInt8])
            throws(HPKE.Error)
        {
            guard let aead = core.suite.aead.algorithm else { throw .exportOnly }
            guard core.sequence < UInt64.max else { throw .messageLimitReached }
            do {
                try aead.seal(
                    key: core.schedule.key, nonce: core.nonce(), plaintext: plaintext, aad: aad, appendingTo: &output)
            } catch { throw .invalidLength }
            try core.increment()
        }

        /// `Seal(aad, pt)` writing `ciphertext ‖ tag` to the start of `output`, a buffer the caller
        /// owns that holds at least `plaintext.count + Nt` bytes (for building a response in its
        /// final buffer without any copy).
        public mutating func seal(
            _ plaintext: UnsafeRawBufferPointer, aad: [UInt8] = [], into output: UnsafeMutableRawBufferPointer
        ) throws(HPKE.Error) {
            try seal(count: plaintext.count, aad: aad, into: output) { $0(plaintext) }
        }

        /// `Seal(aad, pt)` of a plaintext of `count` bytes that `pieces` hands over in order (one buffer
        /// per call of its argument), writing `ciphertext ‖ tag` to the start of `output`, which holds at
        /// least `count + Nt` bytes: a message assembled from parts is sealed without first being copied
        /// into one buffer. Throws `invalidLength` when the pieces do not add up to `count`.
        package mutating func seal(
            count: Int, aad: [UInt8] = [], into output: UnsafeMutableRawBufferPointer,
            pieces: ((UnsafeRawBufferPointer) -> Void) -> Void
        ) throws(HPKE.Error) {
            guard let aead = core.suite.aead.algorithm else { throw .exportOnly }
            guard core.sequence < UInt64.max else { throw .messageLimitReached }
            let sealed: Bool = core.withNonce { nonce in
                do {
                    try aead.seal(
                        key: core.schedule.key, nonce: nonce, count: count, aad: aad, into: output, pieces: pieces)
                    return true
                } catch { return false }
            }
            guard sealed else { throw .invalidLength }
            try core.increment()
        }

        /// `Export(exporter_context, L)`.
        public func export(context: [UInt8], length: Int) throws(HPKE.Error) -> [UInt8] {
            try core.export(context: context, length: length)
        }

        /// Decrypts the message this (fresh) sender context would seal first: the sender holds the same
        /// key schedule as the recipient. For tests that fix the ephemeral key and must read back what an
        /// engine sealed without the recipient's key (the request fuzzer); not part of HPKE.
        @_spi(Testing) public func openFirstSealed(_ ciphertext: [UInt8], aad: [UInt8] = []) throws(HPKE.Error)
            -> [UInt8]
        {
            guard core.sequence == 0 else { throw .messageLimitReached }
            return try core.open(ciphertext, aad: aad)
        }
    }

    /// The recipient's context (`SetupBaseR`, `SetupPSKR`, `SetupAuthR`, `SetupAuthPSKR`). Not copyable;
    /// secrets are cleansed when it is destroyed.
    public struct Recipient: ~Copyable, Sendable {
        var core: ContextCore

        /// Sets up a recipient context.
        /// - Parameters:
        ///   - suite: the ciphersuite.
        ///   - privateKey: the recipient's private key (skR).
        ///   - encapsulatedKey: `enc` from the sender.
        ///   - info: the same info the sender used.
        ///   - options: psk and psk_id for the psk modes.
        ///   - sender: (`authenticatedBy`) the sender's public key (pkS) for the auth modes.
        /// - Throws: `invalidEncapsulatedKey` for a bad `enc`, `invalidPSKInputs`, `kemMismatch`.
        public init(
            suite: Ciphersuite, privateKey: PrivateKey, encapsulatedKey: [UInt8], info: [UInt8],
            options: SetupOptions = SetupOptions(), authenticatedBy sender: PublicKey? = nil
        ) throws(HPKE.Error) {
            guard privateKey.kem == suite.kem else { throw .kemMismatch }
            var shared = try DHKEM(suite.kem).decap(enc: encapsulatedKey, recipient: privateKey, sender: sender)
            defer { SecureBytes.cleanse(&shared) }
            let mode = Sender.mode(psk: !options.psk.isEmpty || !options.pskID.isEmpty, auth: sender != nil)
            let schedule = try KeySchedule.derive(
                suite: suite, mode: mode, sharedSecret: shared, info: info, psk: options.psk, pskID: options.pskID)
            core = ContextCore(suite: suite, schedule: schedule)
        }

        /// The sequence number of the next message to open.
        public var sequenceNumber: UInt64 { core.sequence }

        /// `Open(aad, ct)`: decrypts the next message. Any failure is `openFailed`, and the sequence
        /// number advances only on success.
        public mutating func open(_ ciphertext: [UInt8], aad: [UInt8] = []) throws(HPKE.Error) -> [UInt8] {
            guard core.sequence < UInt64.max else { throw .messageLimitReached }
            let pt = try core.open(ciphertext, aad: aad)
            try core.increment()
            return pt
        }

        /// `Export(exporter_context, L)`.
        public func export(context: [UInt8], length: Int) throws(HPKE.Error) -> [UInt8] {
            try core.export(context: context, length: length)
        }
    }

    /// Single-shot seal: sets up a sender and seals one message.
    /// - Returns: the encapsulated key and the ciphertext (with tag).
    public static func seal(
        suite: Ciphersuite, recipient: PublicKey, info: [UInt8], plaintext: [UInt8], aad: [UInt8] = [],
        options: SetupOptions = SetupOptions(), authenticatedBy sender: PrivateKey? = nil
    ) throws(HPKE.Error) -> (encapsulatedKey: [UInt8], ciphertext: [UInt8]) {
        var s = try Sender(suite: suite, recipient: recipient, info: info, options: options, authenticatedBy: sender)
        let ct = try s.seal(plaintext, aad: aad)
        return (s.encapsulatedKey, ct)
    }

    /// Single-shot open. Every failure — including an invalid `enc` or PSK inputs — is `openFailed`,
    /// except `exportOnly` for an export-only suite.
    public static func open(
        suite: Ciphersuite, privateKey: PrivateKey, encapsulatedKey: [UInt8], info: [UInt8], ciphertext: [UInt8],
        aad: [UInt8] = [], options: SetupOptions = SetupOptions(), authenticatedBy sender: PublicKey? = nil
    ) throws(HPKE.Error) -> [UInt8] {
        if suite.aead == .exportOnly { throw .exportOnly }
        do {
            var r = try Recipient(
                suite: suite, privateKey: privateKey, encapsulatedKey: encapsulatedKey, info: info, options: options,
                authenticatedBy: sender)
            return try r.open(ciphertext, aad: aad)
        } catch {
            throw .openFailed
        }
    }
}
