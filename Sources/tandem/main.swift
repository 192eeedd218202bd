import Foundation

exit(CommandLine.run(Array(CommandLine.arguments.dropFirst())))
