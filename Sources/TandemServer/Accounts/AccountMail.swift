/// An email the accounts service sends: to one address, plain text.
struct AccountMail: Sendable, Hashable {
    var to: String
    var subject: String
    var body: String

    /// The link that creates the account.
    static func signUp(to email: String, link: String) -> AccountMail {
        AccountMail(to: email, subject: "Confirm your email address",
                    body: "Someone (hopefully you) signed up with this address.\r\n\r\nTo confirm and create your account, open:\r\n\(link)\r\n\r\nIf it was not you, ignore this message: no account is created.\r\n")
    }

    /// A sign-up for an address that already has an account: tell its owner, hand nothing out.
    static func alreadyRegistered(to email: String) -> AccountMail {
        AccountMail(to: email, subject: "You already have an account",
                    body: "Someone tried to sign up with this address, which already has an account. If it was you, sign in, or reset your password from the sign-in page.\r\n")
    }

    /// The link that sets a new password.
    static func reset(to email: String, link: String) -> AccountMail {
        AccountMail(to: email, subject: "Reset your password",
                    body: "To choose a new password, open:\r\n\(link)\r\n\r\nIf you did not ask for this, ignore this message: your password stays as it is.\r\n")
    }
}

extension AccountMail {
    /// A share invitation (A30): who shares what, and the share URL that opens it (the landing
    /// page lets someone without an account sign up with this address, then accept).
    static func invitation(to email: String, inviter: String, title: String, url: String) -> AccountMail {
        AccountMail(to: email, subject: "\(inviter) shared \u{201C}\(title)\u{201D} with you",
                    body: "\(inviter) invited you to \u{201C}\(title)\u{201D}.\r\n\r\nTo open it, follow:\r\n\(url)\r\n\r\nIf you have no account yet, sign up with this email address and the invitation is waiting for you. You can turn invitation emails off in your account settings.\r\n")
    }
}

/// Delivers account emails. `send` must not block the caller for long: it queues.
protocol AccountMailer: Sendable {
    func send(_ mail: AccountMail)
}
