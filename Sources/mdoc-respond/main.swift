// mdoc-respond: command-line front end.
// Exit codes: 0 ok, 1 refused/invalid input, 2 usage, 3 I/O problem.
import Foundation
import MdocCBOR

enum Exit {
    static let ok: Int32 = 0
    static let refused: Int32 = 1
    static let usage: Int32 = 2
    static let io: Int32 = 3
}

func fail(_ code: Int32, _ id: String, _ reason: String) -> Never {
    FileHandle.standardError.write(Data("mdoc-respond: error[\(id)]: \(reason)\n".utf8))
    exit(code)
}

let usageText = """
usage: mdoc-respond <command> [options]

commands:
  inspect [options] FILE|-   print a CBOR file (binary or hex) in diagnostic notation, and what it is
  demo [--verbose]           sign and verify a complete mdoc presentation on freshly generated test keys

run 'mdoc-respond <command> --help' for a command's options.
exit codes: 0 ok, 1 invalid or refused input, 2 usage, 3 I/O problem
"""

var args = Array(CommandLine.arguments.dropFirst())
guard let command = args.first else {
    print(usageText)
    exit(Exit.usage)
}
args.removeFirst()

switch command {
case "-h", "--help", "help":
    print(usageText)
case "inspect":
    Inspect.run(args)
case "demo":
    Demo.run(args)
default:
    fail(Exit.usage, "usage", "unknown command '\(command)'; see --help")
}
