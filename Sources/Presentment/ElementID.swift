/// One element a credential holds or a request names: (namespace, identifier), ISO/IEC 18013-5
/// §8.3.2.1.2.1 (`NameSpace`, `DataElementIdentifier`).
public struct ElementID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The NameSpace, e.g. `org.iso.18013.5.1` or `eu.europa.ec.eudi.pid.1`.
    public let nameSpace: String
    /// The DataElementIdentifier, e.g. `age_over_18`.
    public let identifier: String
    /// Creates an element reference.
    public init(_ nameSpace: String, _ identifier: String) {
        self.nameSpace = nameSpace
        self.identifier = identifier
    }
    /// `namespace/identifier`.
    public var description: String { "\(nameSpace)/\(identifier)" }
    /// Reads the `namespace/identifier` form of `description`, split at the last `/` (namespaces are
    /// dotted names; an identifier holding a `/` cannot be named this way, which can only narrow an
    /// approval). Nil when either part is empty.
    public init?(parsing text: String) {
        guard let slash = text.lastIndex(of: "/") else { return nil }
        let ns = text[..<slash]
        let id = text[text.index(after: slash)...]
        guard !ns.isEmpty, !id.isEmpty else { return nil }
        self.init(String(ns), String(id))
    }
    /// Orders by namespace then identifier.
    public static func < (a: ElementID, b: ElementID) -> Bool {
        (a.nameSpace, a.identifier) < (b.nameSpace, b.identifier)
    }
    /// Hashes the identifier only (namespaces rarely differ for one identifier; equality checks both).
    public func hash(into h: inout Hasher) { h.combine(identifier) }
}
