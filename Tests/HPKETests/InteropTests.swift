import Foundation
import Testing
import TestSupport
@testable import HPKE

/// Cross-checks against pyhpke (an independent implementation) in a pinned venv. `scripts/test.sh`
/// creates the venv and sets `MDOC_INTEROP_PYTHON`; without it the test is skipped (failed under CI).
@Suite("HPKE: interop with pyhpke")
struct InteropTests {
    static var python: String? {
        if let p = ProcessInfo.processInfo.environment["MDOC_INTEROP_PYTHON"],
            FileManager.default.isExecutableFile(atPath: p)
        {
            return p
        }
        return nil
    }

    /// Run when the pinned Python is there, or when prerequisites are required (it then fails).
    static var runnable: Bool { python != nil || Prerequisites.required }

    static func hex(_ b: [UInt8]) -> String { Hex.encode(b) }

    struct Case {
        let suite: HPKE.Ciphersuite
        let mode: HPKE.Mode
    }

    @Test(
        "Every suite and mode: pyhpke opens what we seal, we open what pyhpke seals, exports agree",
        .enabled(
            if: InteropTests.runnable, "MDOC_INTEROP_PYTHON not set (scripts/test.sh sets up the pinned pyhpke venv)"))
    func interop() throws {
        let python = try #require(Self.python, "MDOC_INTEROP_PYTHON is required here")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("interop/hpke_peer.py").path
        var cases = [Case]()
        for kem in HPKE.KEM.allCases {
            for kdf in HPKE.KDF.allCases {
                for aead in HPKE.AEAD.allCases {
                    for mode in HPKE.Mode.allCases {
                        cases.append(Case(suite: .init(kem: kem, kdf: kdf, aead: aead), mode: mode))
                    }
                }
            }
        }

        var requests = [[String: Any]]()
        var expectations = [(pt: [UInt8], export: [UInt8]?, recipient: HPKE.PrivateKey?)]()
        let info = Array("mdoc-respond interop".utf8)
        let aad = Array("aad".utf8)
        let exportContext = Array("ctx".utf8)
        for c in cases {
            let psk: [UInt8] = (c.mode == .psk || c.mode == .authPSK) ? [UInt8](repeating: 0x42, count: 32) : []
            let pskID: [UInt8] = psk.isEmpty ? [] : Array("psk-id".utf8)
            let auth = c.mode == .auth || c.mode == .authPSK
            let base: [String: Any] = [
                "kem": Int(c.suite.kem.rawValue), "kdf": Int(c.suite.kdf.rawValue), "aead": Int(c.suite.aead.rawValue),
                "info": Self.hex(info), "aad": Self.hex(aad), "psk": Self.hex(psk), "psk_id": Self.hex(pskID),
                "export_context": Self.hex(exportContext), "export_length": 42,
            ]
            // We seal, Python opens.
            let skR = try HPKE.PrivateKey.generate(kem: c.suite.kem)
            let skS = auth ? try HPKE.PrivateKey.generate(kem: c.suite.kem) : nil
            let pt = Array("sealed by Swift for \(c.suite) \(c.mode)".utf8)
            var sender = try HPKE.Sender(
                suite: c.suite, recipient: skR.publicKey, info: info, options: .init(psk: psk, pskID: pskID),
                authenticatedBy: skS)
            let ct = c.suite.aead == .exportOnly ? [] : try sender.seal(pt, aad: aad)
            var open = base
            open["op"] = "open"
            open["skR"] = Self.hex(try skR.serialized())
            open["enc"] = Self.hex(sender.encapsulatedKey)
            open["ct"] = Self.hex(ct)
            if let skS { open["pkS"] = Self.hex(skS.publicKey.serialized) }
            requests.append(open)
            expectations.append((pt, try sender.export(context: exportContext, length: 42), nil))
            // Python seals, we open.
            let ourR = try HPKE.PrivateKey.generate(kem: c.suite.kem)
            var seal = base
            seal["op"] = "seal"
            seal["pkR"] = Self.hex(ourR.publicKey.serialized)
            seal["auth"] = auth
            seal["pt"] = Self.hex(Array("sealed by pyhpke".utf8))
            requests.append(seal)
            expectations.append((Array("sealed by pyhpke".utf8), nil, ourR))
        }

        let input = try JSONSerialization.data(withJSONObject: ["cases": requests])
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [script]
        let stdin = Pipe()
        let stdout = Pipe()
        p.standardInput = stdin
        p.standardOutput = stdout
        try p.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let results = try #require(
            (try JSONSerialization.jsonObject(with: output) as? [String: Any])?["results"] as? [[String: String]])
        #expect(results.count == requests.count)

        var swiftToPy = 0
        var pyToSwift = 0
        for (i, r) in results.enumerated() {
            let c = cases[i / 2]
            #expect(r["error"] == nil, "pyhpke failed on \(c.suite) \(c.mode): \(r["error"] ?? "")")
            if r["error"] != nil { continue }
            let exp = expectations[i]
            if i % 2 == 0 {
                if c.suite.aead != .exportOnly {
                    #expect(r["pt"].map(h) == exp.pt, "pyhpke opened \(c.suite) \(c.mode)")
                }
                #expect(r["export"].map(h) == exp.export, "export agrees \(c.suite) \(c.mode)")
                swiftToPy += 1
            } else {
                let psk: [UInt8] = (c.mode == .psk || c.mode == .authPSK) ? [UInt8](repeating: 0x42, count: 32) : []
                let pskID: [UInt8] = psk.isEmpty ? [] : Array("psk-id".utf8)
                let pkS = try r["pkS"].map { try HPKE.PublicKey(serialized: h($0), kem: c.suite.kem) }
                var recipient = try HPKE.Recipient(
                    suite: c.suite, privateKey: exp.recipient!, encapsulatedKey: h(r["enc"]!), info: info,
                    options: .init(psk: psk, pskID: pskID), authenticatedBy: pkS)
                if c.suite.aead != .exportOnly { #expect(try recipient.open(h(r["ct"]!), aad: aad) == exp.pt) }
                #expect(try recipient.export(context: exportContext, length: 42) == h(r["export"]!))
                pyToSwift += 1
            }
        }
        print(
            "pyhpke interop: \(cases.count) suite×mode combinations; \(swiftToPy) opened by pyhpke, \(pyToSwift) opened by us (P-384 and HKDF-SHA384 included)"
        )
    }
}
