import Foundation

// Everything lives in BenchCommand; top-level code is main-actor isolated, so keep it to this.
exit(BenchCommand.run(Array(CommandLine.arguments.dropFirst())))
