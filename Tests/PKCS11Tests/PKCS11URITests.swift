import Testing
@testable import PKCS11

/// RFC 7512 URIs: what is read, how it is written back, and every form refused.
@Suite("PKCS#11 URIs")
struct PKCS11URITests {
    @Test("Path and query attributes are read, percent-decoded and written back in one canonical form")
    func parses() throws {
        let u = try PKCS11URI(
            parsing:
                "pkcs11:token=Wallet%20HSM;manufacturer=SoftHSM%20project;serial=1a2b;model=SoftHSM%20v2;slot-id=7;"
                + "object=mdl-1;id=%01%02%ff;type=private?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/run/pin"
        )
        #expect(u.token == "Wallet HSM" && u.manufacturer == "SoftHSM project" && u.serial == "1a2b")
        #expect(u.model == "SoftHSM v2" && u.slotID == 7 && u.object == "mdl-1" && u.id == [1, 2, 0xFF])
        #expect(u.modulePath == "/usr/lib/softhsm/libsofthsm2.so" && u.pinSource == .file("/run/pin"))
        let again = try PKCS11URI(parsing: u.string)
        #expect(again == u)
        #expect(u.string.contains("token=Wallet%20HSM") && u.string.contains("id=%01%02%FF"))
        // The PIN source's location never shows in the description or the redacted form.
        #expect(
            !u.description.contains("/run/pin") && !u.redacted.contains("/run/pin") && u.string.contains("/run/pin"))
        let env = try PKCS11URI(parsing: "PKCS11:object=k?x-pin-env=WALLET_PIN&module-path=/m.so")
        #expect(env.pinSource == .environment("WALLET_PIN") && !env.redacted.contains("WALLET_PIN"))
        for form in ["file:///run/pin", "/run/pin", "file:/run/pin"] {
            #expect(try PKCS11URI(parsing: "pkcs11:object=k?pin-source=\(form)").pinSource == .file("/run/pin"))
        }
        #expect(try PKCS11URI(parsing: "pkcs11:id=%aa;library-version=3").libraryVersion == "3.0")
        #expect(PKCS11URI.isPKCS11("pkcs11:object=x") && !PKCS11URI.isPKCS11("keys/mdl.pem"))
        // Values holding URI punctuation are written percent-encoded (found by FuzzPKCS11URI): the text
        // reads back to the same URI, and no value can pass for another attribute in the redacted form.
        let odd = try PKCS11URI(parsing: "pkcs11:object=a=b&c?module-path=/m?x-pin-env=Y.so&pin-source=//run/pin")
        #expect(odd.object == "a=b&c" && odd.modulePath == "/m?x-pin-env=Y.so" && odd.pinSource == .file("//run/pin"))
        #expect(try PKCS11URI(parsing: odd.string) == odd)
        #expect(!odd.redacted.contains("x-pin-env=Y") && odd.string.contains("object=a%3Db%26c"))
    }

    @Test("Malformed, ambiguous, secret-carrying and unsupported URIs are refused with the rule they break")
    func refuses() {
        let rows: [(String, String)] = [
            ("pkcs11:object=k?pin-value=1234", "carries a PIN value"),
            ("pkcs11:object=k?module-name=softhsm2", "module-name is not supported"),
            ("pkcs11:object=k;object=j", "appears twice"),
            ("pkcs11:object=k?module-path=/a&module-path=/b", "appears twice"),
            ("pkcs11:object=k;type=public", "must name a private key"),
            ("pkcs11:object=k;type=cert", "must name a private key"),
            ("pkcs11:token=t", "names no key object"),
            ("pkcs11:", "names no key object"),
            ("pkcs11:object=k;flavour=vanilla", "path attribute this implementation does not support"),
            ("pkcs11:object=k?x-vendor=1", "query attribute this implementation does not support"),
            ("pkcs11:object=%zz", "percent escape"),
            ("pkcs11:object=%4", "percent escape"),
            ("pkcs11:object=a%0Ab", "control characters"),
            ("pkcs11:object=a%FFb", "not UTF-8"),
            ("pkcs11:object=a b", "must be percent-encoded"),
            ("pkcs11:object=k?module-path=lib.so", "module-path must be absolute"),
            ("pkcs11:object=k?pin-source=%7C/usr/bin/getpin", "pin-source must name a file"),
            ("pkcs11:object=k?pin-source=pin.txt", "pin-source must name a file"),
            ("pkcs11:object=k?pin-source=/p&x-pin-env=P", "exclusive"),
            ("pkcs11:object=k?x-pin-env=1PIN", "environment variable name"),
            ("pkcs11:object=k?x-pin-env=PIN;rm", "environment variable name"),
            ("pkcs11:id=", "id must be 1-256 bytes"),
            ("pkcs11:object=k;slot-id=-1", "slot-id must be a decimal number"),
            ("pkcs11:object=k;slot-id=007", "slot-id must be a decimal number"),
            ("pkcs11:object=k;library-version=1.2.3", "library-version must be M or M.N"),
            ("pkcs11:object", "not name=value"),
            ("pkcs11:=k", "not name=value"),
            ("pkcs12:object=k", "does not start with pkcs11:"),
            ("keys/mdl.pem", "does not start with pkcs11:"),
            ("pkcs11:object=" + String(repeating: "a", count: 5000), "longer than 4096"),
            ("pkcs11:object=" + String(repeating: "%41", count: 1400), "longer than 4096"),
            ("pkcs11:object=" + String(repeating: "a", count: 1100), "longer than 1024"),
        ]
        for (uri, rule) in rows {
            #expect {
                _ = try PKCS11URI(parsing: uri)
            } throws: { error in
                guard let e = error as? PKCS11Error else { return false }
                return e.code == .invalidURI && e.detail.contains(rule)
            }
        }
        print("PKCS#11 URI refusals: \(rows.count) rows")
    }
}
