import DigitalCredentials
import Synchronization
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
import MdocCBOR

/// `mdoc-respond respond`: answer a raw request.
enum Respond {
    static let help = """
        usage: mdoc-respond respond --request FILE|- --origin ORIGIN [--context DIR] [--credential ID]
                                    [--approve all|none|ns/elem,...] [--approve-documents 'I:ns/elem,...;J:']
                                    [--approve-plain-fallback I,...] [--zk-dir DIR]
                                    [--protocol auto|annexc|openid4vp]
                                    [--format auto|cbor|json|android|data|protocol]
                                    [--missing omit|report] [--config JSON|@FILE] [--out FILE|-] [--clock RFC3339]
                                    [--repeat N] [--report]

        Answers a Digital Credentials API request (any framing) from ORIGIN with the credentials of the
        context (default: the built-in test context in TestVectors/context) and writes the response:
        ISO 18013-7 Annex C (org-iso-mdoc) or OpenID4VP (openid4vp-v1-unsigned/signed/multisigned),
        whichever the request offers; when it offers both, the one that can be answered (Annex C first).

          --protocol  auto (default), or force annexc or openid4vp (the other protocol's entries are ignored)
          --clock     FOR TESTING: judge validity at this fixed time instead of the system's (expired
                      credentials become presentable; the consent model shows it as fixedClock)
          --config    the engine configuration as the C ABI takes it (include/mdoc_respond.h): clock
                      (with "testing": true), protocol, protocols, missingElements, selfCheck, allowAppOrigins, preferA256GCM,
                      errorDisclosure, limits, trust (narrows the context's stored policy); inline JSON or
                      @FILE. The options above are shorthands for its members and win over it
          --format    auto: Annex C raw CBOR for a data-object request, the Android envelope otherwise;
                      OpenID4VP the data object, or {"protocol","data"} for the list framings.
                      Annex C: cbor (iOS responseData), json ({"response": ...}), android ({"protocol","data"});
                      OpenID4VP: data ({"vp_token"} or {"response": JWE}), protocol ({"protocol","data"})
          --approve   all (default), none, or the comma-separated elements the user approved (in every
                      document; a document releasing none of them is not presented)
          --approve-documents
                      per document index, the elements approved: '0:ns/a,ns/b;1:' presents document 0
                      with those elements and document 1 with none (document-level consent); a document
                      not listed is not presented
          --approve-plain-fallback
                      document indexes whose proof request may be answered with a plain, linkable
                      presentation when no proof can be made (the reader must accept one: zkRequired false);
                      without it such a document is refused (zk.fallbackNotApproved)
          --zk-dir    where the Longfellow prover and circuits are (default: $MDOC_ZK_DIR, else
                      ${XDG_DATA_HOME:-~/.local/share}/mdoc-respond/zk, where scripts/zk-setup.sh puts them)
          --missing   omit (default) leaves out requested elements the credential lacks; report lists them
                      as errors (code 0) and unanswered optional documents as documentErrors
          --repeat N  answer the same request N times in-process and report throughput on stderr
          --report    print a one-line summary on stderr, also on refusal, with the process's peak
                      memory: never element values, the origin or the reader's subject
        environment: MDOC_PKCS11_MODULE_DIRS  the directories (':'-separated, absolute) pkcs11: keys'
                      modules may be loaded from (default: the system's PKCS#11 module directories)
        exit codes: 0 answered, 1 refused (error code on stderr), 2 usage, 3 I/O or context problem
        """

    static func run(_ args: [String]) {
        let o = Options(args, flags: ["--report"], help: help)
        let report = o.flags.contains("--report")
        func refuse(_ error: PresentmentError) -> Never {
            if report { writeStderr("mdoc-respond: refused (\(error.code.rawValue))\(peakMemoryNote())\n") }
            fail(Exit.refused, error)
        }
        o.check(allowed: [
            "--request", "--origin", "--context", "--credential", "--approve", "--format", "--out", "--clock",
            "--repeat", "--missing", "--protocol", "--approve-documents", "--config", "--approve-plain-fallback",
            "--zk-dir",
        ])
        let context = BuiltIn.context(o.value("--context"))
        let configuration = BuiltIn.configuration(o, over: context)
        // Read no more than the engine accepts: a larger request is refused without being held.
        let raw = Data(
            Input.read(o.require("--request"), limit: configuration.limits.maxRequestBytes) {
                refuse(PresentmentError(FramingRule.tooLarge))
            })
        let origin = o.require("--origin")
        // --report: the engine's observer gives each call's duration (counts and timings, no content).
        let timings = ReportTimings()
        var observed = configuration
        if report { observed.observer = timings }
        let engine = DigitalCredentialsEngine(context: context, configuration: observed)
        let format: ResponseFormat
        switch o.value("--format") ?? "auto" {
        case "auto": format = .automatic
        case "cbor": format = .binary
        case "json", "data": format = .dataObject
        case "android", "protocol": format = .protocolAndData
        default: fail(Exit.usage, "usage", "--format must be auto, cbor, json, android, data or protocol")
        }
        let formatName = o.value("--format") ?? "auto"
        var approval = Approval.allRequested
        func elements(_ text: Substring, _ option: String) -> Set<ElementID> {
            var set = Set<ElementID>()
            for item in text.split(separator: ",") {
                guard let id = ElementID(parsing: String(item)) else {
                    fail(Exit.usage, "usage", "\(option) takes namespace/element items")
                }
                set.insert(id)
            }
            return set
        }
        if let a = o.value("--approve"), a != "all" {
            approval = .elements(a == "none" ? [] : elements(Substring(a), "--approve"))
        }
        if let a = o.value("--approve-documents") {
            guard o.value("--approve") == nil else {
                fail(Exit.usage, "usage", "give --approve or --approve-documents, not both")
            }
            var map = [Int: Set<ElementID>]()
            for part in a.split(separator: ";", omittingEmptySubsequences: true) {
                guard let colon = part.firstIndex(of: ":"), let i = Int(part[..<colon]), i >= 0, i < 1 << 16,
                    map[i] == nil
                else {
                    fail(Exit.usage, "usage", "--approve-documents takes 'INDEX:ns/elem,...' parts separated by ';'")
                }
                map[i] = elements(part[part.index(after: colon)...], "--approve-documents")
            }
            approval = .perDocument(map)
        }
        var plainFallback = Set<Int>()
        for part in (o.value("--approve-plain-fallback") ?? "").split(separator: ",") {
            guard let i = Int(part), i >= 0, i < 1 << 16 else {
                fail(Exit.usage, "usage", "--approve-plain-fallback takes document indexes separated by ','")
            }
            plainFallback.insert(i)
        }
        let repeatCount = Int(o.value("--repeat") ?? "1") ?? 0
        guard repeatCount >= 1 else { fail(Exit.usage, "usage", "--repeat needs a positive number") }
        func once() throws(PresentmentError) -> (Data, DigitalCredentialsRequest) {
            let request = try engine.parse(rawRequest: raw, origin: origin)
            var using = [Int: String]()
            if let id = o.value("--credential") { for d in request.documents { using[d.index] = id } }
            // The format names are each protocol's own: cbor, json and android are Annex C's; data and
            // protocol OpenID4VP's.
            let names =
                request.details.presentationProtocol == .openID4VP
                ? ["auto", "data", "protocol"] : ["auto", "cbor", "json", "android"]
            guard names.contains(formatName) else {
                fail(
                    Exit.usage, "usage",
                    "--format \(formatName) is not for \(request.protocolIdentifier); it takes \(names.joined(separator: ", "))"
                )
            }
            return (
                try engine.respond(
                    to: request, using: using, approving: approval, plainFallback: plainFallback, format: format),
                request
            )
        }
        do {
            let start = Date()
            var (out, request) = try once()
            for _ in 1..<repeatCount { (out, request) = try once() }
            let elapsed = Date().timeIntervalSince(start)
            if repeatCount > 1 {
                writeStderr(
                    "mdoc-respond: \(repeatCount) responses in \(fixed(elapsed, 3)) s: \(fixed(elapsed / Double(repeatCount) * 1e6, 1)) µs each, \(fixed(Double(repeatCount) / elapsed, 0)) per second\n"
                )
            }
            writeOutput(out, to: o.value("--out"))
            if report {
                // No origin, no reader subject, no value; the docType comes from the request, so it is escaped.
                let docs = request.documents.map { "\(safe($0.docType)) (\($0.elements.count) asked)" }.joined(
                    separator: ", ")
                let reader: String =
                    switch request.readerVerdict {
                    case .notAuthenticated: "not authenticated"
                    case .trusted: "trusted"
                    case .signedNotTrusted(_, let reason): "signed, not trusted (\(reason.rawValue))"
                    }
                writeStderr(
                    "mdoc-respond: answered (\(request.protocolIdentifier)): \(docs); reader \(reader); \(out.count) bytes; \(timings.summary)\(peakMemoryNote())\n"
                )
            }
        } catch {
            refuse(error)
        }
    }
}

/// The durations of the engine's calls, from its observer, for `--report` (the last of each operation).
final class ReportTimings: EngineObserver {
    private let last = Mutex<[EngineEvent.Operation: EngineEvent]>([:])

    func observe(_ event: EngineEvent) { last.withLock { $0[event.operation] = event } }

    /// `parse 123 µs (read 10, check 90, plan 20), respond 456 µs (plan 5, build 300, seal 150)`.
    var summary: String {
        let seen = last.withLock { $0 }
        func µs(_ seconds: Double) -> Int { Int((seconds * 1e6).rounded()) }
        return EngineEvent.Operation.allCases.compactMap { op in
            seen[op].map { e in
                let stages = e.stages.map { "\($0.stage.rawValue) \(µs($0.seconds))" }.joined(separator: ", ")
                return "\(op.rawValue) \(µs(e.seconds)) µs" + (stages.isEmpty ? "" : " (\(stages))")
            }
        }.joined(separator: ", ")
    }
}
