// mdoc-respond: command-line front end.
// Exit codes: 0 ok, 1 refused/invalid input, 2 usage, 3 I/O problem.
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif
import DigitalCredentials
import MdocCBOR
import Presentment

enum Exit {
    static let ok: Int32 = 0
    static let refused: Int32 = 1
    static let usage: Int32 = 2
    static let io: Int32 = 3
}

func fail(_ code: Int32, _ id: String, _ reason: String) -> Never {
    writeStderr("mdoc-respond: error[\(id)]: \(reason)\n")
    exit(code)
}

/// A refusal as the C ABI words it: `error[code]: domain.rule: detail`.
func fail(_ code: Int32, _ error: PresentmentError) -> Never {
    fail(code, error.code.rawValue, "\(error.rule): \(error.detail)")
}

let usageText = """
    usage: mdoc-respond <command> [options]

    commands:
      respond    answer a raw request (file or stdin) from an origin; writes the sealed response
      inspect    explain a request (--request/--origin), or print any CBOR file in diagnostic notation
      context    manage a credential context: init, import, list, remove, cancel, reinstate, policy, trust
      reader     a verifier for testing wallets: 'reader request' builds one, 'reader open' verifies an answer
      demo       the whole flow on the built-in test data, with a readable summary

    run 'mdoc-respond <command> --help' for a command's options; 'mdoc-respond --version' prints the version.
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
case "--version", "version":
    print("mdoc-respond \(DigitalCredentialsEngine.version)")
case "respond":
    Respond.run(args)
case "inspect":
    Inspect.run(args)
case "context":
    ContextCommand.run(args)
case "reader":
    ReaderCommand.run(args)
case "demo":
    Demo.run(args)
default:
    fail(Exit.usage, "usage", "unknown command '\(command)'; see --help")
}
