import AnnexC
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
                                    [--approve all|ns/elem,...] [--format auto|cbor|json|android]
                                    [--missing omit|report] [--out FILE|-] [--clock RFC3339] [--repeat N] [--report]

        Answers an ISO 18013-7 Annex C request (any framing) from ORIGIN with the credentials of the
        context (default: the built-in test context in TestVectors/context) and writes the sealed response.

          --format    auto (raw CBOR for a data-object request, the Android envelope otherwise),
                      cbor (iOS responseData), json ({"response": ...}), android ({"protocol","data"})
          --approve   all (default) or the comma-separated elements the user approved
          --missing   omit (default) leaves out requested elements the credential lacks; report lists them
                      as errors (code 0) and unanswered optional documents as documentErrors
          --repeat N  answer the same request N times in-process and report throughput on stderr
          --report    print a one-line summary on stderr, also on refusal, with the process's peak
                      memory: never element values, the origin or the reader's subject
        exit codes: 0 answered, 1 refused (error code on stderr), 2 usage, 3 I/O or context problem
        """

    static func run(_ args: [String]) {
        let o = Options(args, flags: ["--report"], help: help)
        let report = o.flags.contains("--report")
        func refuse(_ code: String, _ detail: String) -> Never {
            if report { writeStderr("mdoc-respond: refused (\(code))\(peakMemoryNote())\n") }
            fail(Exit.refused, code, detail)
        }
        o.check(allowed: [
            "--request", "--origin", "--context", "--credential", "--approve", "--format", "--out", "--clock",
            "--repeat", "--missing",
        ])
        // Read no more than the engine accepts: a larger request is refused without being held.
        let limit = AnnexCEngine.Configuration().maxRequestBytes
        let raw = Data(
            Input.read(o.require("--request"), limit: limit) {
                refuse(AnnexCError.Code.limitExceeded.rawValue, "request larger than the configured maximum")
            })
        let origin = o.require("--origin")
        let context = BuiltIn.context(o.value("--context"))
        let clock = parseClock(o.value("--clock"))
        let fixedClock = o.value("--clock") != nil
        var configuration = AnnexCEngine.Configuration(clock: { fixedClock ? clock : Date() })
        switch o.value("--missing") ?? "omit" {
        case "omit": configuration.missingElements = .omit
        case "report": configuration.missingElements = .report
        default: fail(Exit.usage, "usage", "--missing must be omit or report")
        }
        let engine = AnnexCEngine(context: context, configuration: configuration)
        let format: ResponseFormat
        switch o.value("--format") ?? "auto" {
        case "auto": format = .automatic
        case "cbor": format = .encryptedResponseCBOR
        case "json": format = .responseJSON
        case "android": format = .androidEnvelope
        default: fail(Exit.usage, "usage", "--format must be auto, cbor, json or android")
        }
        var approval = Approval.allRequested
        if let a = o.value("--approve"), a != "all" {
            var set = Set<ElementID>()
            for item in a.split(separator: ",") {
                guard let slash = item.lastIndex(of: "/") else {
                    fail(Exit.usage, "usage", "--approve takes namespace/element items")
                }
                set.insert(ElementID(String(item[..<slash]), String(item[item.index(after: slash)...])))
            }
            approval = .elements(set)
        }
        let repeatCount = Int(o.value("--repeat") ?? "1") ?? 0
        guard repeatCount >= 1 else { fail(Exit.usage, "usage", "--repeat needs a positive number") }
        func once() throws(AnnexCError) -> (Data, PresentmentRequest) {
            let request = try engine.parse(rawRequest: raw, origin: origin)
            var using = [Int: String]()
            if let id = o.value("--credential") { for d in request.documents { using[d.index] = id } }
            return (try engine.respond(to: request, using: using, approving: approval, format: format), request)
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
                    "mdoc-respond: answered: \(docs); reader \(reader); \(out.count) bytes\(peakMemoryNote())\n")
            }
        } catch {
            refuse(error.code.rawValue, error.detail)
        }
    }
}
