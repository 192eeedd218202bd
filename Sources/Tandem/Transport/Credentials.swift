/// How requests are signed in (CloudKit Web Services: "Authentication").
public enum Credentials: Sendable, Hashable {
    /// A user token from `tandem token create --user …`, sent as `Authorization: Bearer`.
    case userToken(String)
    /// An API token (`ckAPIToken`) and, for a signed-in user, a web auth token (`ckWebAuthToken`).
    case apiToken(String, webAuthToken: String?)
    /// No credentials: public database reads only.
    case none
}
