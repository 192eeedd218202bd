internal import TandemCore

extension Container {
    /// Whether the credentials reach a user now (`CKContainer.accountStatus()`; decisions A34):
    ///
    /// - `available`: `users/current` answered.
    /// - `noAccount`: no user token (`.none`, or an API token without a web auth token; nothing
    ///   is sent), or the server refused it: expired (`sessionExpired`), revoked (signed out,
    ///   revoked elsewhere, account deleted: `sessionRevoked`) or unknown (`notAuthenticated`).
    /// - `temporarilyUnavailable`: the server could not be reached, or answered 503.
    /// - `restricted`: the server refused the user this container (`ACCESS_DENIED`).
    /// - `couldNotDetermine`: any other answer (the table: `AccountStatus.init(failure:)`).
    ///
    /// One attempt, no retries: ask again later for a fresh answer. A refused session is also
    /// told to `accountChanges` as `sessionEnded`.
    /// - Throws: only `operationCancelled`, when the task is cancelled.
    public func accountStatus() async throws(TandemError) -> AccountStatus {
        guard credentials.userToken != nil else { return .noAccount }
        do {
            _ = try await transport.currentUserRecordName(attempts: 1)
            return .available
        } catch {
            if error.code == .operationCancelled { throw error }
            return AccountStatus(failure: error)
        }
    }

    /// Changes of who this container is signed in as, from the moment of this call
    /// (`CKAccountChanged`'s role; decisions A36): `signedIn`, `switched`, `signedOut`, and
    /// `sessionEnded` when a request finds the session expired or revoked. A token rotation is
    /// not a change (same person; `Configuration.credentialsChanged` hears of it). Each access
    /// is a new sequence; it ends when dropped.
    ///
    /// ```swift
    /// for await change in container.accountChanges {
    ///     switch change {
    ///     case .signedIn(let user), .switched(_, let user): showData(of: user)
    ///     case .signedOut, .sessionEnded: showSignIn()
    ///     }
    /// }
    /// ```
    public var accountChanges: AsyncStream<AccountChange> { transport.account.changes() }

    /// Starts an account with a password (`POST /auth/1/{container}/signup`, Tandem's accounts
    /// API). The server answers the same for a known email (no enumeration, decisions A3) and
    /// emails a link; the account exists once the link is followed (`verifyEmail(token:)`) or the
    /// operator runs `tandem user verify EMAIL`.
    /// - Parameters:
    ///   - apiToken: the app's API token of this container (`tandem token create --api`); nil
    ///     uses the one in `credentials`.
    ///   - name: the display name, at most 200 characters.
    /// - Throws: `invalidArguments` (not an email, a password under the server's minimum),
    ///   `notAuthenticated` (no or a wrong API token), `requestRateLimited` with `retryAfterSeconds`.
    public func signUp(email: String, password: String, name: String? = nil, apiToken: String? = nil) async throws(TandemError) {
        var body: JSONObject = ["email": .string(email), "password": .string(password)]
        if let name { body["name"] = .string(name) }
        _ = try await accountsRequest("signup", body: body, apiToken: try appToken(apiToken))
    }

    /// Completes a sign-up with the secret of the emailed link (its `token` query parameter);
    /// `POST /auth/1/{container}/verify`. Returns the new account's user record ID. Nobody is
    /// signed in by it: call `signIn` next.
    /// - Throws: `notAuthenticated` for a link unknown, used or expired.
    public func verifyEmail(token: String, apiToken: String? = nil) async throws(TandemError) -> Record.ID {
        let answer = try await accountsRequest("verify", body: ["token": .string(token)], apiToken: try appToken(apiToken))
        guard let name = answer["userRecordName"]?.stringValue else { throw TandemError(.internalError, "verify answered without a userRecordName") }
        return Record.ID(recordName: name)
    }

    /// Signs in with email and password (`POST /auth/1/{container}/signin`) and makes every
    /// later request as that person: the container's credentials become `.apiToken(apiToken,
    /// webAuthToken:)`, returned here (save them), also told to `credentialsChanged`, and
    /// `accountChanges` tells `signedIn` or `switched`.
    ///
    /// The web auth token works in this container only and expires by the server's limits
    /// (14 idle days, 90 days by default); it is rotated while in use (`credentialsChanged`).
    /// - Parameters:
    ///   - apiToken: the app's API token of this container; nil uses the one in `credentials`.
    ///   - consent: the person agreed to let this app use their account. A first sign-in to a
    ///     container needs it (decisions A2): ask them when this throws `consentRequired`, then
    ///     call again with `true`. Later sign-ins ignore it.
    ///   - device: a name for the session in the person's session list (e.g. "Grace's laptop").
    /// - Throws: `notAuthenticated` (wrong email or password, unverified email, or a wrong API
    ///   token — the server does not say which), `consentRequired`, `requestRateLimited` with
    ///   `retryAfterSeconds` after too many failures (per account and per address; not retried
    ///   here), `invalidArguments`. One attempt.
    @discardableResult
    public func signIn(email: String, password: String, apiToken: String? = nil, consent: Bool = false,
                       device: String? = nil) async throws(TandemError) -> Credentials {
        let api = try appToken(apiToken)
        var body: JSONObject = ["email": .string(email), "password": .string(password), "consent": .bool(consent)]
        if let device { body["device"] = .string(device) }
        return try adoptSession(try await accountsRequest("signin", body: body, apiToken: api), operation: "signin", apiToken: api)
    }

    /// Trades an ID token (a JWT) from the app's own identity provider for a Tandem session
    /// (`POST /auth/1/{container}/token/exchange`, Supabase's "third-party auth"; decisions A22)
    /// and makes every later request as that person, as `signIn(email:password:)` does: the
    /// credentials become `.apiToken(apiToken, webAuthToken:)`, returned here, told to
    /// `credentialsChanged`, and `accountChanges` tells `signedIn` or `switched`.
    ///
    /// For a server or command-line app that already signed the person in elsewhere. The
    /// operator must trust the token's issuer and audience for this container (`tandem serve
    /// --oidc-exchange CONTAINER,ISSUER,AUDIENCE`). The server checks the signature against the
    /// issuer's JWK Set (RS256 or ES256), `iss`, `aud`, `exp`/`nbf`/`iat` (60 s skew) and `sub`
    /// (A18); the identity (issuer, `sub`) names one account, made at its first exchange and
    /// linked by a verified email (A20). No `consent` parameter: the backend speaks for its user,
    /// so the container's consent is recorded with the first exchange.
    /// - Parameters:
    ///   - idToken: the compact JWS as the identity provider issued it.
    ///   - apiToken: the app's API token of this container; nil uses the one in `credentials`.
    ///   - device: a name for the session in the person's session list.
    /// - Throws: `notAuthenticated` for a token that breaks any rule (signature, `alg`, key not
    ///   in the JWK Set, issuer not trusted here, audience, expiry), for an identity whose
    ///   verified email belongs to an account with an unverified email (nothing is linked, A20),
    ///   or a wrong API token; the reason says which. `invalidArguments` for text that is not a
    ///   JWT, or no API token; `requestRateLimited` with `retryAfterSeconds` after too many
    ///   failures (the sign-in limits, A5; not retried here); `serviceUnavailable` when the
    ///   issuer's discovery document or keys cannot be fetched now. One attempt.
    @discardableResult
    public func signIn(exchanging idToken: String, apiToken: String? = nil, device: String? = nil) async throws(TandemError) -> Credentials {
        let api = try appToken(apiToken)
        var body: JSONObject = ["idToken": .string(idToken)]
        if let device { body["device"] = .string(device) }
        return try adoptSession(try await accountsRequest("token/exchange", body: body, apiToken: api), operation: "token/exchange", apiToken: api)
    }

    /// Ends the session on the server (`POST /auth/1/{container}/signout`: the token stops
    /// working) and drops the user from the credentials: `.apiToken(api, webAuthToken: nil)`, or
    /// `.none` for a user token. `accountChanges` tells `signedOut`; `credentialsChanged` hears.
    /// A session the server already ended (expired, revoked) signs out here all the same; with
    /// no user in the credentials nothing happens.
    /// - Throws: when the server could not be told (`networkUnavailable`, `serviceUnavailable`,
    ///   ...); the credentials are then kept, so the app can try again.
    public func signOut() async throws(TandemError) {
        let current = credentials
        guard current.userToken != nil else { return }
        do {
            _ = try await transport.json(transport.authURL("signout", apiToken: current.apiTokenValue, presentingUser: true),
                                         body: .object([:]), attempts: 1)
        } catch where error.needsSignIn {
            // Already over on the server.
        }
        transport.account.replace(current.signedOut, user: nil, byContainer: true)
    }

    /// Makes the session a sign-in answered (`{ckWebAuthToken, userRecordName, …}`) the
    /// container's credentials, telling the account tracker who signed in.
    private func adoptSession(_ answer: JSONValue, operation: String, apiToken: String) throws(TandemError) -> Credentials {
        guard let token = answer["ckWebAuthToken"]?.stringValue, let user = answer["userRecordName"]?.stringValue else {
            throw TandemError(.internalError, "\(operation) answered without ckWebAuthToken and userRecordName")
        }
        let credentials = Credentials.apiToken(apiToken, webAuthToken: token)
        transport.account.replace(credentials, user: user, byContainer: true)
        return credentials
    }

    /// The API token to send: `given`, else the one in `credentials`.
    private func appToken(_ given: String?) throws(TandemError) -> String {
        guard let token = given ?? credentials.apiTokenValue else {
            throw TandemError(.invalidArguments, "pass the app's API token (tandem token create --api): the credentials carry none")
        }
        return token
    }

    /// POSTs `body` to an accounts operation with the API token only (no user), one attempt.
    private func accountsRequest(_ operation: String, body: JSONObject, apiToken: String) async throws(TandemError) -> JSONValue {
        try await transport.json(transport.authURL(operation, apiToken: apiToken, presentingUser: false), body: .object(body),
                                 attempts: 1, presentingCredentials: false)
    }
}
