import DigitalCredentials
import AnnexCReader
import Foundation
import HPKE
import MdocCBOR

let portrait: [UInt8] = {
    var r = SeededRandom("portrait")
    return [0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10] + Array("JFIF".utf8) + [0x00] + r.bytes(8192 - 16) + [0xff, 0xd9]
}()
func fd(_ s: String) -> CBORValue { .tagged(1004, .text(s)) }
let mDLNS = "org.iso.18013.5.1"
let mDLElements: [MdocIssuer.Element] = [
    .init("family_name", .text("Mustermann")), .init("given_name", .text("Erika")),
    .init("birth_date", fd("1971-09-01")),
    .init("issue_date", fd("2026-01-01")), .init("expiry_date", fd("2031-01-01")),
    .init("issuing_country", .text("UT")),
    .init("issuing_authority", .text("Utopia Department of Motor Vehicles")),
    .init("document_number", .text("D12345678")),
    .init("portrait", .bytes(portrait)),
    .init(
        "driving_privileges",
        .array([
            .map([
                .init(.text("vehicle_category_code"), .text("B")), .init(.text("issue_date"), fd("2010-03-01")),
                .init(.text("expiry_date"), fd("2031-01-01")),
            ]),
            .map([
                .init(.text("vehicle_category_code"), .text("A")), .init(.text("issue_date"), fd("2012-06-15")),
                .init(.text("expiry_date"), fd("2031-01-01")),
                .init(.text("codes"), .array([.map([.init(.text("code"), .text("78"))])])),
            ]),
        ])),
    .init("un_distinguishing_sign", .text("UTO")), .init("administrative_number", .text("A-0042")),
    .init("sex", .unsigned(2)),
    .init("height", .unsigned(172)), .init("weight", .unsigned(64)), .init("eye_colour", .text("blue")),
    .init("hair_colour", .text("brown")),
    .init("birth_place", .text("Utopia City")), .init("resident_address", .text("1 Main Street")),
    .init("portrait_capture_date", .tagged(0, .text("2025-12-01T10:00:00Z"))),
    .init("age_in_years", .unsigned(55)), .init("age_birth_year", .unsigned(1971)), .init("age_over_18", .bool(true)),
    .init("age_over_21", .bool(true)),
    .init("age_over_65", .bool(false)), .init("issuing_jurisdiction", .text("UT-01")),
    .init("nationality", .text("UT")), .init("resident_city", .text("Utopia City")),
    .init("resident_state", .text("Central")), .init("resident_postal_code", .text("01234")),
    .init("resident_country", .text("UT")),
    .init("family_name_national_character", .text("Mustermann")),
    .init("given_name_national_character", .text("Erika")),
    .init("signature_usual_mark", .bytes([UInt8](repeating: 0x5a, count: 512))),
]
let pidNS = "eu.europa.ec.eudi.pid.1"
let pidElements: [MdocIssuer.Element] = [
    .init("family_name", .text("Mustermann")), .init("given_name", .text("Erika")),
    .init("birth_date", fd("1971-09-01")),
    .init("age_over_18", .bool(true)), .init("age_in_years", .unsigned(55)), .init("age_birth_year", .unsigned(1971)),
    .init("family_name_birth", .text("Gabler")), .init("birth_place", .text("Berlin")),
    .init("birth_country", .text("DE")),
    .init("resident_address", .text("Heidestraße 17, 51147 Köln")), .init("resident_country", .text("DE")),
    .init("resident_city", .text("Köln")),
    .init("gender", .unsigned(2)), .init("nationality", .array([.text("DE")])),
    .init("issuance_date", fd("2026-01-01")), .init("expiry_date", fd("2031-01-01")),
    .init("issuing_authority", .text("Bundesdruckerei")), .init("document_number", .text("T22000129")),
    .init("issuing_country", .text("DE")),
]
let photoNS = "org.iso.23220.1"
let photoElements: [MdocIssuer.Element] = [
    .init("family_name_unicode", .text("Mustermann")), .init("given_name_unicode", .text("Erika")),
    .init("birth_date", fd("1971-09-01")),
    .init("portrait", .bytes(portrait)), .init("issue_date", fd("2026-01-01")), .init("expiry_date", fd("2031-01-01")),
    .init("issuing_authority_unicode", .text("Utopia Civil Registry")), .init("issuing_country", .text("UT")),
    .init("age_over_18", .bool(true)),
    .init("sex", .unsigned(2)), .init("nationality", .text("UT")), .init("document_number", .text("P7654321")),
]

struct Cred {
    let id: String
    let docType: String
    let ns: String
    let elements: [MdocIssuer.Element]
    var from = "2026-01-01T00:00:00Z"
    var until = "2031-01-01T00:00:00Z"
    var cancelled = false
    var untrusted = false
}
