import Foundation
import Testing
import TestSupport
import AnnexC
import AnnexCReader
import DCAPIFraming
import DigitalCredentials
import Longfellow
import OpenID4VP
import OpenID4VPReader
import Presentment

/// docs/rules.md, the error and rule reference, is generated from the rule enums themselves: this test
/// renders it and fails when the checked-in file differs (a rule added, renamed or reworded without the
/// reference). `MDOC_WRITE_RULES=1 swift test --filter RuleReferenceTests` rewrites it.
@Suite("Rule reference")
struct RuleReferenceTests {
    static func section<R: RefusalRule>(_ type: R.Type, _ what: String) -> String {
        var out =
            "## `\(R.domain)`: \(what)\n\n| rule | code | C status | what it requires |\n| --- | --- | --- | --- |\n"
        for rule in R.allCases {
            let number = PresentmentError.Code.allCases.firstIndex(of: rule.code)! + 1
            out += "| `\(R.domain).\(rule.rawValue)` | `\(rule.code.rawValue)` | \(number) | \(rule.summary) |\n"
        }
        return out + "\n"
    }

    static func render() -> String {
        var out = """
            # Rule reference

            <!-- Generated from the rule enums by Tests/AnnexCTests/RuleReferenceTests.swift; do not edit.
                 Regenerate: MDOC_WRITE_RULES=1 swift test --filter RuleReferenceTests -->

            Every refusal carries a code (`PresentmentError.Code`; the C ABI's status number, the CLI's
            `error[code]`) and the rule it broke (`PresentmentError.rule`; `domain.rule` at the start of the
            C ABI's and the CLI's detail). [errors.md](errors.md) explains the codes and how to handle them.

            ## Codes

            | C status | code |
            | --- | --- |

            """
        for (i, code) in PresentmentError.Code.allCases.enumerated() { out += "| \(i + 1) | `\(code.rawValue)` |\n" }
        out += "\n"
        out += section(FramingRule.self, "the Digital Credentials API framing")
        out += section(OriginRule.self, "the requesting origin")
        out += section(AnnexCRule.self, "ISO/IEC 18013-7 Annex C requests")
        out += section(OpenID4VPRule.self, "OpenID4VP requests")
        out += section(DCQLRule.self, "DCQL queries")
        out += section(TrustRule.self, "reader trust")
        out += section(SelectionRule.self, "selection and consent")
        out += section(ZeroKnowledgeRule.self, "zero-knowledge answers")
        out += section(LongfellowRule.self, "the Longfellow prover")
        out += section(KeyRule.self, "device keys")
        out += section(ResponseRule.self, "building, signing and sealing the response")
        out += section(ContextRule.self, "the credential context and its store")
        out += section(VerifierRule.self, "the reader side, Annex C (tests, the CLI's reader commands)")
        out += section(OpenID4VPVerifierRule.self, "the reader side, OpenID4VP")
        out += "## `configuration`: configuration JSON (C ABI, Python, the CLI's `--config`)\n\n"
        out += "The operator's own input, not a request: the detail names the document and the member "
        out += "(`configuration.rule: member ...`); the C ABI returns `MDOC_ERR_INVALID_CONFIGURATION` (102)."
        out += "\n\n| rule | the member ... |\n| --- | --- |\n"
        for rule in ConfigurationError.Rule.allCases {
            out += "| `configuration.\(rule.rawValue)` | \(rule.summary) |\n"
        }
        return out
    }

    @Test("docs/rules.md is the rule enums' reference, every domain once")
    func referenceIsCurrent() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../docs/rules.md"
        ).standardized
        let rendered = Self.render()
        if ProcessInfo.processInfo.environment["MDOC_WRITE_RULES"] == "1" {
            try Data(rendered.utf8).write(to: path)
        }
        let onDisk = try String(contentsOf: path, encoding: .utf8)
        #expect(onDisk == rendered, "docs/rules.md is stale: MDOC_WRITE_RULES=1 swift test --filter RuleReferenceTests")
    }
}
