#if canImport(Glibc)
import Glibc
#endif
import ItsypadCLI

exit(Itsypad.main(CommandLine.arguments))
