/// The JSON framings a Digital Credentials API request arrives in.
public enum RequestFraming: String, Sendable, Hashable, CaseIterable {
    /// A protocol's `data` object on its own (iOS `requestData`; Annex C `{"deviceRequest",
    /// "encryptionInfo"}`).
    case dataObject
    /// `{"protocol": "...", "data": {...}}`.
    case protocolAndData
    /// `{"requests": [{"protocol", "data"}, ...]}` (Android Credential Manager `requestJson`).
    case requestList
    /// `{"digital": {"requests": [...]}}` (the page's `navigator.credentials.get` argument).
    case digitalRequestList
}
