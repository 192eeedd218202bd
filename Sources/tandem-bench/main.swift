import Foundation
import TandemCrypto

// Everything lives in BenchCommand; top-level code is main-actor isolated, so keep it to this.
// Before anything else touches OpenSSL: no exit-time cleanup racing our threads (LibCrypto).
LibCrypto.initialize()
exit(BenchCommand.run(Array(CommandLine.arguments.dropFirst())))
