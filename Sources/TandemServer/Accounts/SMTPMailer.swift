import Dispatch

/// Sends account emails one after another on its own queue, so a slow mail server never holds
/// a request; a failure is logged (the person can ask again), never retried blindly.
final class SMTPMailer: AccountMailer {
    let client: SMTPClient
    let log: RequestLog
    private let queue = DispatchQueue(label: "tandem.smtp")

    init(client: SMTPClient, log: RequestLog) {
        self.client = client
        self.log = log
    }

    func send(_ mail: AccountMail) {
        queue.async { [client, log] in
            do {
                try client.send(mail)
            } catch {
                log.message("accounts: could not send '\(mail.subject)' to \(mail.to): \(error)")
            }
        }
    }
}
