import Foundation
import TandemCrypto

// Before anything else touches OpenSSL: no exit-time cleanup racing our threads (LibCrypto).
LibCrypto.initialize()
// Whatever the server writes (database, assets, journal, secret) is for its own user only (issue 14).
umask(0o077)
exit(CommandLine.run(Array(CommandLine.arguments.dropFirst())))
