import Foundation
import TandemCrypto

// Before anything else touches OpenSSL: no exit-time cleanup racing our threads (LibCrypto).
LibCrypto.initialize()
exit(CommandLine.run(Array(CommandLine.arguments.dropFirst())))
